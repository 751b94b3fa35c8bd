"""OPD metrics against hand-computed cases (the arithmetic is written out in the comments)."""

import numpy as np
import pytest

from gaze.metrics.progress import aggregate, opd_metrics, process, remove_outliers, unify

MONOTONE = [0.2, 0.4, 0.6, 0.8, 1.0]
# smoothing taps 0.1 0.2 0.4 0.2 0.1, renormalised over the taps inside the curve:
#   i=0: (.4*.2 + .2*.4 + .1*.6)/.7 = .22/.7      i=1: (.2*.2+.4*.4+.2*.6+.1*.8)/.9 = .40/.9
#   i=2: .6                                       i=3: (.1*.4+.2*.6+.4*.8+.2*1)/.9 = .68/.9
#   i=4: (.1*.6 + .2*.8 + .4*1)/.7 = .62/.7
MONOTONE_SMOOTHED = [0.22 / 0.7, 0.40 / 0.9, 0.6, 0.68 / 0.9, 0.62 / 0.7]


def test_processing_smooths_with_renormalised_edges():
    assert process(MONOTONE) == pytest.approx(MONOTONE_SMOOTHED)


def test_0_100_input_is_rescaled_and_increments_accumulate():
    assert unify([0, 50, 100]).tolist() == [0.0, 0.5, 1.0]
    assert process([0, 50, 100]) == pytest.approx([0.2 / 0.7, 0.4 / 0.8, 0.5 / 0.7])
    assert unify([0.1, 0.2, 0.3], "increments") == pytest.approx([0.1, 0.3, 0.6])
    assert unify([10, 20, 30], "increments") == pytest.approx([0.1, 0.3, 0.6])
    assert unify([-0.5, 2.0]).tolist() == [0.0, 0.02]  # /100 (max|v| > 1.5), then clip


def test_outliers_are_replaced_by_the_neighbour_median():
    p = np.array([0.1, 0.2, 0.9, 0.3, 0.4, 0.5])
    # i=2: neighbours .1 .2 .3 .4 -> median .25, |.9-.25| > .35 -> .25 ; i=3: median of
    # .2 .9 .4 .5 (the original curve) = .45, |.3-.45| = .15 -> kept
    assert remove_outliers(p).tolist() == [0.1, 0.2, 0.25, 0.3, 0.4, 0.5]
    assert remove_outliers(np.array([0.0, 1.0, 0.0, 1.0])).tolist() == [0.0, 1.0, 0.0, 1.0]


def test_monotone_curve_metrics():
    m = opd_metrics(MONOTONE_SMOOTHED)
    mp = 0.62 / 0.7
    assert m["MP"] == pytest.approx(mp)
    assert (m["MC25"], m["MC50"], m["MC75"], m["SR"]) == (1.0, 1.0, 1.0, 0.0)
    assert m["PPL"] == pytest.approx(mp)  # L = p_T for a monotone curve from 0
    assert m["CRA"] == 0.0 and m["STR"] == 0.0 and m["DRR"] is None
    assert m["FNS"] == pytest.approx(0.5 * mp + 0.3 + 0.2) and m["SQS"] is None
    labelled = opd_metrics(MONOTONE_SMOOTHED, success=True)
    assert labelled["FNS"] is None and labelled["SQS"] == pytest.approx(0.5 * mp + 0.3 + 0.2)


def test_curve_with_several_drawdowns():
    p = [0.2, 0.5, 0.3, 0.6, 0.4, 0.7]
    m = opd_metrics(p)
    # running max [.2 .5 .5 .6 .6 .7]; drawdowns [0 0 .2 0 .2 0] -> mean .4/6, / MP .7
    assert m["CRA"] == pytest.approx((0.4 / 6) / 0.7)
    # L = .2+.3+.2+.3+.2+.3 = 1.5 -> PPL = .49/1.5
    assert m["PPL"] == pytest.approx(0.49 / 1.5)
    assert m["DRR"] == 1.0  # first max drawdown .2 at t=2, recovered by .4 -> clipped to 1
    assert m["FNS"] == pytest.approx(0.5 * 0.7 + 0.0 + 0.2)
    partial = opd_metrics([0.2, 0.6, 0.3, 0.45])
    assert partial["DRR"] == pytest.approx((0.15 + 1e-6) / (0.3 + 1e-6))


@pytest.mark.parametrize(
    ("curve", "expected"),
    [
        ([], {"MP": None, "PPL": None, "FNS": None}),
        ([0.5], {"MP": 0.5, "PPL": 0.5, "CRA": 0.0, "STR": 0.0, "DRR": None, "FNS": 0.45}),
        ([0.3] * 6, {"MP": 0.3, "PPL": 0.3, "CRA": 0.0, "STR": 5 / 6, "FNS": 0.15}),
        ([0.0] * 4, {"MP": 0.0, "PPL": 0.0, "CRA": 0.0, "STR": 1.0, "MC25": 0.0, "FNS": 0.0}),
    ],
)
def test_edge_cases(curve, expected):
    m = opd_metrics(curve)
    for key, value in expected.items():
        assert m[key] == (pytest.approx(value) if value is not None else None), key


def test_v1_mode():
    m = opd_metrics(process(MONOTONE, v1=True), v1=True)  # no smoothing in v1
    assert m["MP"] == 100.0 and m["SR"] == 100.0  # SR at MP >= 1.0, values x100
    assert m["PPL"] == 100.0 and m["CRA"] == 0.0 and m["SQS"] == 100.0
    dipped = opd_metrics([0.2, 0.5, 0.3, 0.6, 0.4, 0.7], v1=True)
    assert dipped["CRA"] == pytest.approx(100 * 0.4 / 6)  # not divided by MP
    assert dipped["PPL"] == pytest.approx(100 * 0.49 / 1.5)  # final value .7 here equals MP


def test_nan_is_refused():
    with pytest.raises(ValueError):
        unify([0.1, float("nan")])


def test_aggregate_uses_only_eligible_rollouts():
    rows = [opd_metrics([0.2, 0.6, 0.3, 0.45]), opd_metrics([0.5]), opd_metrics([0.2, 1.0])]
    agg = aggregate(rows)
    assert agg["mean"]["DRR"] == pytest.approx(rows[0]["DRR"])  # only one had a drawdown
    assert agg["mean"]["SQS"] == pytest.approx(rows[2]["SQS"])
    assert agg["median"]["SR"] is None  # binary rates have means only
    assert aggregate([rows[1]])["mean"]["DRR"] is None  # an empty subset gives no value
