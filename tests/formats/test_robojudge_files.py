"""`bench agreement --format robojudge`: RoboJudge's gold and prediction files read as its
scorer reads them. The files are written here in that format (not copies of its data) with each
quirk of the published ones: a repeated gold id, repeated prediction ids, 0.0 scores, ids with a
``.mp4`` suffix or without the ``data__`` prefix, a free-text row and a non-numeric score."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from tests.cli.test_judge_commands import jsonl

SUB_SCORES = {"agent_consistency": 2, "scene_consistency": 2, "interaction_realism": 1,
              "agent_match": 2, "object_correct": 1, "goal_completed": 1}  # fmt: skip


def gold_row(item, pa, ia):
    return {"item_id": item, "dataset": "some_set", "model": "gen_a", "task": "task_1",
            "physical_adherence": pa, "instruction_alignment": ia, **SUB_SCORES}  # fmt: skip


def pred_row(item, pa, ia):
    return {"item_id": item, "physical_adherence": pa, "instruction_alignment": ia,
            "pa_reason": "...", "ia_reason": "...", "error": ""}  # fmt: skip


def test_robojudge_files_scored_by_its_rules(tmp_path, capsys):
    gold = jsonl(
        tmp_path / "gold.jsonl",
        [
            gold_row("data__x1", 2, 3),  # superseded by the repeated row below
            gold_row("data__x2", 4, 4),
            gold_row("data__x3", 1, 5),
            gold_row("data__x1", 5, 3),
        ],
    )
    preds = jsonl(
        tmp_path / "pred.jsonl",
        [
            pred_row("x1.mp4", 5, 3),  # suffix dropped, prefix added: data__x1
            pred_row("data__x2", 0.0, 4),  # 0.0 is a score (rounds to 1 for exact)
            pred_row("data__x2", 4, 4),  # the repeat is a second pair
            pred_row("data__x3", "n/a", 5),  # a null PA, counted; IA kept
            {"item_id": "data__x3", "axis": "PA", "predict": "score: 2"},  # free text
            pred_row("data__unknown", 3, 3),  # no gold
        ],
    )
    out = tmp_path / "agr.json"
    args = ["bench", "agreement", str(gold), str(preds), "--out", str(out)]
    assert run([*args, "--format", "robojudge", "--compat", "robojudge"]) == 0
    data = json.loads(out.read_text())
    # PA pairs (gold, pred): (5, 5), (4, 0.0), (4, 4) and the free text's (1, 2): exact 2/4,
    # mse (0 + 16 + 0 + 1) / 4
    assert data["pa"]["n"] == 4 and data["pa"]["exact"] == pytest.approx(2 / 4)
    assert data["pa"]["mse"] == pytest.approx(17 / 4)
    # IA pairs: (3, 3), (4, 4), (4, 4), (5, 5): all exact
    assert data["ia"]["n"] == 4 and data["ia"]["exact"] == 1.0
    assert data["overall"]["n"] == 8
    reasons = data["import"]["skipped_by_reason"]
    assert reasons == {"null prediction (not a number)": 1, "no gold score for this item": 2}
    assert data["import"]["adjusted"] == {"repeated gold id: last row kept": 2}

    # the same files by gaze's own protocol: the 0.0 is left out and counted, and the free
    # text is not read
    assert run([*args, "--format", "robojudge"]) == 0
    data = json.loads(out.read_text())
    assert data["pa"]["n"] == 2
    assert "left out (1): free-text prediction" in capsys.readouterr().err
    assert data["import"]["skipped_by_reason"]["score outside 1-5 (gaze's protocol)"] == 1


def test_free_text_answers_read_as_robojudges_scorer_reads_them(tmp_path):
    """One axis per row (``axis``, or the prompt's or the answer's wording), the score by its
    patterns in order, gold rows per axis (``axis``/``score_type`` with ``gold``/``label``).
    The expected values are what RoboJudge's ``code/evaluate.py`` printed for these files, run
    outside this repository (docs/reproduce.md)."""
    gold = jsonl(
        tmp_path / "gold.jsonl",
        [
            gold_row("data__x1", 2, 3),
            gold_row("data__x2", 4, 4),
            gold_row("data__x3", 1, 5),
            gold_row("data__x1", 5, 3),
            {"item_id": "data__x4", "axis": "PA", "gold": 3.5},  # rounds half to even: 4
            {"item_id": "data__x4", "score_type": "instruction_alignment", "label": 2},
        ],
    )
    preds = jsonl(
        tmp_path / "pred.jsonl",
        [
            pred_row("x1.mp4", 5, 3),
            pred_row("data__x2", 0.0, 4),
            pred_row("data__x2", 4, 4),
            pred_row("data__x3", "n/a", 5),
            {"item_id": "data__x3", "axis": "PA", "predict": "score: 2"},
            pred_row("data__unknown", 3, 3),
            {"item_id": "x4", "axis": "IA", "predict": "I would rate this 3/5 overall, not 2"},
            {"item_id": "data__x4", "prompt": "Judge the PHYSICAL REALISM", "predict": "4 - ok"},
            {"item_id": "data__x4", "predict": '{"instruction_alignment": 5}'},
            {"item_id": "data__x4", "predict": "no axis anywhere 3"},
            {"item_id": "data__x2", "axis": "IA", "predict": "cannot tell"},
        ],
    )
    out = tmp_path / "agr.json"
    args = ["bench", "agreement", str(gold), str(preds), "--out", str(out)]
    assert run([*args, "--format", "robojudge", "--compat", "robojudge"]) == 0
    data = json.loads(out.read_text())
    printed = {  # RoboJudge's evaluate.py, to its 6 printed decimals
        "pa": {"n": 5, "pearson": 0.412113, "spearman": 0.688247, "exact": 0.6,
               "within_1": 0.8, "mse": 3.4},
        "ia": {"n": 6, "pearson": 0.369274, "spearman": 0.369274, "exact": 0.666667,
               "within_1": 0.833333, "mse": 1.666667},
        "overall": {"n": 11, "pearson": 0.321714, "exact": 0.636364, "mse": 2.454545},
    }  # fmt: skip
    for axis, values in printed.items():
        for key, value in values.items():
            assert round(data[axis][key], 6) == value, (axis, key)
    assert data["import"]["skipped_by_reason"] == {
        "null prediction (not a number)": 1,
        "no gold score for this item": 2,
        "free-text prediction naming no axis: not read (as RoboJudge)": 1,
        "null prediction (no score in the free text)": 1,
    }
