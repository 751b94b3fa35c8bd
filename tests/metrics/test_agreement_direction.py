import numpy as np
import pytest
from scipy import stats

from gaze.metrics import direction
from gaze.metrics.agreement import axis_agreement, overall


def test_agreement_hand_computed():
    r = axis_agreement([3, 4, 5, 2], [3, 3.5, 3, 2])
    # differences 0, .5, 2, 0
    assert r["exact"] == 0.5 and r["within_1"] == 0.75
    assert r["mse"] == pytest.approx((0.25 + 4) / 4)
    assert r["over_rate"] == 0.5 and r["under_rate"] == 0.0 and r["n"] == 4


def test_correlations_match_scipy_on_random_data():
    rng = np.random.default_rng(5)
    human = rng.integers(1, 6, 200).astype(float)
    pred = np.clip(human + rng.integers(-1, 2, 200), 1, 5)
    r = axis_agreement(pred, human)
    assert r["pearson"] == pytest.approx(stats.pearsonr(pred, human)[0])
    assert r["spearman"] == pytest.approx(stats.spearmanr(pred, human)[0])
    assert axis_agreement([3, 3], [1, 5])["pearson"] is None  # constant input: undefined


def test_overall_pools_pairs_and_averages_accuracies():
    pa = (np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 4.0]))
    ia = (np.array([5.0, 4.0]), np.array([5.0, 2.0]))
    a, b = axis_agreement(*pa), axis_agreement(*ia)
    o = overall(a, b, pa, ia)
    assert o["mse"] == pytest.approx((0 + 0 + 1 + 0 + 4) / 5)
    assert o["exact"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert o["pearson"] == pytest.approx(stats.pearsonr([1, 2, 3, 5, 4], [1, 2, 4, 5, 2])[0])


def test_direction_hand_computed():
    curve = [0, 1, 2, 3, 4, 5, 4, 3, 2, 1]
    # m_t over d_1..d_t (at most 5): t6 = .6, t7 = .2 -> rising; t8 = -.2, t9 = -.6 -> falling
    assert direction.predictions(curve).tolist() == [0, 1, 1, 1, 1, 1, 1, 1, -1, -1]
    # rising [0,5] keeps steps 2,3; falling [5,9] keeps step 7 (predicted rising: wrong)
    result = direction.score([(curve, [(0, 5, 1), (5, 9, -1)])])
    assert result["n"] == 3 and result["accuracy"] == pytest.approx(2 / 3)
    assert result["rising"] == pytest.approx({"precision": 2 / 3, "recall": 1.0, "f1": 0.8})
    assert result["falling"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert result["macro_f1"] == pytest.approx(0.4)


def test_no_prediction_is_a_miss_but_no_false_positive():
    flat = [0.5] * 8
    result = direction.score([(flat, [(0, 7, 1)])])
    assert result["n"] == 4 and result["accuracy"] == 0.0
    assert result["rising"]["recall"] == 0.0 and result["falling"]["precision"] == 0.0
