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
    # PA pairs (gold, pred): (5, 5), (4, 0.0), (4, 4): exact 2/3, mse (0 + 16 + 0) / 3
    assert data["pa"]["n"] == 3 and data["pa"]["exact"] == pytest.approx(2 / 3)
    assert data["pa"]["mse"] == pytest.approx(16 / 3)
    # IA pairs: (3, 3), (4, 4), (4, 4), (5, 5): all exact
    assert data["ia"]["n"] == 4 and data["ia"]["exact"] == 1.0
    assert data["overall"]["n"] == 7
    reasons = data["import"]["skipped_by_reason"]
    assert reasons == {
        "null prediction (not a number)": 1,
        "free-text prediction (no score fields): not read": 1,
        "no gold score for this item": 2,
    }
    assert data["import"]["adjusted"] == {"repeated gold id: last row kept": 2}
    err = capsys.readouterr().err
    assert "left out (1): free-text prediction" in err

    # the same files by gaze's own protocol: the 0.0 is left out and counted
    assert run([*args, "--format", "robojudge"]) == 0
    data = json.loads(out.read_text())
    assert data["pa"]["n"] == 2
    assert data["import"]["skipped_by_reason"]["score outside 1-5 (gaze's protocol)"] == 1
