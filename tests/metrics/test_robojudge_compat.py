"""`bench agreement --compat robojudge` scores as RoboJudge's published code does; every expected
value is worked out by hand from its rules (gold rounded half-to-even, the prediction rounded
half-up only for exact and within-1, Overall pooled and only with both axes)."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from gaze.metrics.robojudge_compat import axis_scores, gold_score, overall_scores


def test_gold_rounds_half_to_even_and_predictions_half_up():
    assert [gold_score(x) for x in (2.5, 3.5, 4.5, 1.49)] == [2, 4, 4, 1]
    # gold 2.5 -> 2, prediction 2.5 -> 3: not exact, within 1; squared error on 2 vs 2.5
    scores = axis_scores([(2.5, 2.5)])
    assert (scores["exact"], scores["within_1"], scores["mse"]) == (0.0, 1.0, 0.25)


def test_a_prediction_of_zero_and_repeated_items_count():
    pairs = [(1, 0.0), (3, 3.0), (3, 3.0)]  # 0.0 rounds up to 1 for exact; the repeat counts
    scores = axis_scores(pairs)
    assert scores["n"] == 3 and scores["exact"] == 1.0
    assert scores["mse"] == pytest.approx(1 / 3)


def test_spearman_uses_average_ranks_and_overall_needs_both_axes():
    pairs = [(1, 1.0), (2, 3.0), (3, 3.0), (4, 5.0)]
    # ranks gold 1,2,3,4; prediction 1, 2.5, 2.5, 4
    gold_r, pred_r = [1, 2, 3, 4], [1, 2.5, 2.5, 4]
    mean = 2.5
    num = sum((a - mean) * (b - mean) for a, b in zip(gold_r, pred_r, strict=True))
    den = (sum((a - mean) ** 2 for a in gold_r) * sum((b - mean) ** 2 for b in pred_r)) ** 0.5
    assert axis_scores(pairs)["spearman"] == pytest.approx(num / den)
    assert overall_scores(pairs, []) is None
    pooled = overall_scores(pairs, [(5, 4.4)])
    # exact: (1, 1.0) and (3, 3.0); 4.4 rounds to 4 against a gold 5
    assert pooled["n"] == 5 and pooled["exact"] == pytest.approx(2 / 5)


def test_the_command_labels_its_output(tmp_path, capsys):
    base = {"instruction": "x", "events": [], "condition_id": "k"}
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        "".join(
            json.dumps({**base, "clip_id": c, "video": f"{c}.mp4", "pa": pa, "ia": ia}) + "\n"
            for c, pa, ia in (("a", 3.5, 2), ("b", 2.5, 4), ("c", 5, 1))
        )
    )
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"clip_id": c, "events": [], "pa": pa, "ia": ia}) + "\n"
            for c, pa, ia in (("a", 4, 2), ("b", 0.0, 4), ("c", 5, 2))
        )
    )
    out = tmp_path / "agr.json"
    args = ["bench", "agreement", str(manifest), str(preds), "--out", str(out)]
    assert run([*args, "--compat", "robojudge"]) == 0
    data = json.loads(out.read_text())
    assert data["compat"].startswith("robojudge")
    # PA gold 4, 2, 5 against 4, 0.0 (-> 1), 5: exact 2/3, within 1 all, mse (0 + 4 + 0) / 3
    assert data["pa"]["exact"] == pytest.approx(2 / 3) and data["pa"]["within_1"] == 1.0
    assert data["pa"]["mse"] == pytest.approx(4 / 3)
    assert data["overall"]["n"] == 6 and "ci" not in data
    assert "compat robojudge" in capsys.readouterr().out
    assert run(args) == 2  # gaze's own protocol refuses a 0.0 score
