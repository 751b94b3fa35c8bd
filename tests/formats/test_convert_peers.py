"""`gaze convert` for RoboGaze's original files, RoboJudge's, the PRM toolkit's and GLiDE's, both
ways, on small files written here in each peer's format (not the peers' data), with every quirk
the issue lists: frames without fps, renamed types, null severities, duplicated ids, 0.0 scores,
string labels, curves by path, processed-only curves."""

from __future__ import annotations

import json
from pathlib import Path

from gaze.cli.main import run
from gaze.formats.glide import read_glide
from gaze.formats.robogaze_code import read_ground_truth, read_reports
from gaze.formats.summary import ImportSummary
from tests.cli.test_judge_commands import jsonl


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def convert(*args: str) -> int:
    return run(["convert", *args])


def test_original_ground_truth_becomes_a_manifest(tmp_path, capsys):
    gt = tmp_path / "gt"
    gt.mkdir()
    glitch = {"glitch_type": "impossible_motion", "start_frame": 20, "end_frame": 30}
    (gt / "a.json").write_text(
        json.dumps(
            {
                "video_id": "a",
                "task": "stack the cups",
                "fps": 10,
                "glitches": [
                    {**glitch, "glitch_id": "g1", "severity": None, "note": "cup  moves alone"},
                    {**glitch, "glitch_type": "blur", "human_severity": 2, "description": "blur"},
                    {**glitch, "glitch_type": "not_a_type"},
                ],
            }
        )
    )
    (gt / "b.json").write_text(json.dumps({"video_id": "b", "task": "t", "glitches": []}))
    out = tmp_path / "out" / "m.jsonl"
    out.parent.mkdir()
    assert convert(str(gt), "--from", "robogaze", "--out", str(out)) == 0
    err = capsys.readouterr().err
    assert "left out (1): frames but no fps (give --fps)" in err
    (a,) = rows(out)
    assert a["video"] == "../gt/a.mp4" and a["fps"] == 10
    first, second = a["events"]
    assert (first["type"], first["start_s"], first["end_s"]) == ("other_implausible_dynamics", 2, 3)
    assert first["description"] == "cup moves alone"
    assert a["metadata"]["severity_defaulted"] == [0]
    assert second["severity"] == 2 and a["metadata"]["robogaze"]["events"][0] == {"glitch_id": "g1"}
    assert "type impossible_motion read as other_implausible_dynamics" in err
    assert "left out (1): type 'not_a_type' not in the codebook" in err
    assert convert(str(gt), "--from", "robogaze", "--fps", "5", "--out", str(out)) == 0
    assert [r["clip_id"] for r in rows(out)] == ["a", "b"]  # b now has an fps
    back = tmp_path / "gt_back"
    assert convert(str(out), "--to", "robogaze-code", "--out", str(back)) == 0
    (a_back, b_back) = read_ground_truth(back, ImportSummary(source="x"))
    assert [(e.id, e.start_frame, e.end_frame, e.severity) for e in a_back.events] == [
        ("g1", 20, 30, 0),  # the filled-in severity is null again, read as 0 by the original
        ("G2", 20, 30, 2),
    ]
    assert a_back.raw["glitches"][0]["severity"] is None and a_back.task == "stack the cups"


def test_original_reports_become_predictions_and_go_back(tmp_path):
    outputs = tmp_path / "outputs"
    (outputs / "gr1_sim" / "ep1").mkdir(parents=True)
    report = {
        "video_id": "ep1",
        "video_meta": {"fps": 20},
        "glitches": [
            {
                "glitch_type": "object_teleportation",
                "start_frame": 10,
                "end_frame": 14,
                "severity": 5,
                "confidence": 0.8,
                "description": "the cup jumps",
            }
        ],
    }
    (outputs / "gr1_sim" / "ep1" / "report.json").write_text(json.dumps(report))
    preds = tmp_path / "p.jsonl"
    assert convert(str(outputs), "--from", "robogaze", "--out", str(preds)) == 0
    (pred,) = rows(preds)
    assert pred["clip_id"] == "gr1_sim__ep1"  # the dataset folder in front, as the original
    assert (pred["events"][0]["start_s"], pred["events"][0]["end_s"]) == (0.5, 0.7)
    back = tmp_path / "back"
    assert convert(str(preds), "--to", "robogaze-code", "--fps", "20", "--out", str(back)) == 0
    again = read_reports(back, ImportSummary(source="x"))["gr1_sim__ep1"]
    assert [(e.start_frame, e.end_frame, e.severity) for e in again.events] == [(10, 14, 5)]


def test_robojudge_files_both_ways(tmp_path, capsys):
    gold = tmp_path / "final.jsonl"
    base = {"dataset": "d", "model": "m", "task": "task_0001", "agent_consistency": 2}
    jsonl(
        gold,
        [
            {**base, "item_id": "x", "video_url": "https://h/x.mp4", "physical_adherence": 3},
            {**base, "item_id": "x", "physical_adherence": 4, "instruction_alignment": 2},
            {**base, "item_id": "y", "physical_adherence": 5, "instruction_alignment": 5},
        ],
    )
    manifest = tmp_path / "m.jsonl"
    assert convert(str(gold), "--from", "robojudge", "--out", str(manifest)) == 0
    err = capsys.readouterr().err
    assert "repeated gold id: last row kept" in err and "the task id stands in" in err
    x, y = rows(manifest)
    assert (x["pa"], x["ia"], x["instruction"]) == (4.0, 2.0, "task_0001")
    assert x["metadata"]["robojudge"]["agent_consistency"] == 2
    judge = tmp_path / "judge.jsonl"
    jsonl(
        judge,
        [
            {"item_id": "x.mp4", "physical_adherence": 0.0, "instruction_alignment": "n/a"},
            {"item_id": "y", "predict": "free text only"},
            {"item_id": "y", "physical_adherence": 4, "instruction_alignment": 4},
            {"item_id": "y", "physical_adherence": 5, "instruction_alignment": 5},
        ],
    )
    preds = tmp_path / "p.jsonl"
    assert convert(str(judge), "--from", "robojudge", "--out", str(preds)) == 0
    err = capsys.readouterr().err
    px, py = rows(preds)
    assert px == {"clip_id": "x", "pa": 0.0, "ia": None}  # 0.0 kept as it is there
    assert py["pa"] == 5.0
    assert "free-text prediction" in err and "repeated prediction id: last row kept" in err
    assert "score is not a number (read as null)" in err
    back = tmp_path / "gold_back.jsonl"
    assert convert(str(manifest), "--to", "robojudge", "--out", str(back)) == 0
    first = rows(back)[0]
    assert first["item_id"] == "x" and first["physical_adherence"] == 4.0
    assert first["agent_consistency"] == 2 and first["dataset"] == "d"


def test_prm_toolkit_rows_become_a_manifest_and_curves_and_go_back(tmp_path, capsys):
    (tmp_path / "c2.json").write_text(json.dumps({"progress": [0.0, 0.4, 1.0]}))
    toolkit = tmp_path / "manifest.jsonl"
    jsonl(
        toolkit,
        [
            {
                "case_id": "c1",
                "task": "open the drawer",
                "task_name": "drawer",
                "video": "v/c1.mp4",
                "wrist_video": "v/c1_wrist.mp4",
                "label": "success",
                "benchmark": "b",
                "model": "m",
                "progress": [0.1, 0.5, 0.9],
            },
            {
                "case_id": "c2",
                "task": "t",
                "video": "v/c2.mp4",
                "label": "failure",
                "progress_path": "c2.json",
            },
            {
                "case_id": "c3",
                "task": "t",
                "video": "v/c3.mp4",
                "label": "maybe",
                "progress_processed": [0.2, 0.3],
            },
            {"case_id": "c1", "task": "again"},
        ],
    )
    manifest, curves = tmp_path / "m.jsonl", tmp_path / "curves.jsonl"
    args = [str(toolkit), "--from", "prm", "--out", str(manifest), "--curves", str(curves)]
    assert convert(*args) == 0
    err = capsys.readouterr().err
    m = {r["clip_id"]: r for r in rows(manifest)}
    assert m["c1"]["success"] is True and m["c2"]["success"] is False
    assert "success" not in m["c3"] and "is not a toolkit word" in err
    assert m["c1"]["metadata"]["prm"]["wrist_video"] == "v/c1_wrist.mp4"
    c = {r["case_id"]: r for r in rows(curves)}
    assert c["c2"]["progress"] == [0.0, 0.4, 1.0] and c["c2"]["label"] == 0
    assert c["c1"]["task"] == "drawer" and c["c1"]["benchmark"] == "b"
    assert "c3" not in c and "only a processed curve" in err and "repeated case_id" in err
    back = tmp_path / "toolkit_back.jsonl"
    assert convert(str(manifest), "--to", "prm", "--curves", str(curves), "--out", str(back)) == 0
    b = {r["case_id"]: r for r in rows(back)}
    assert b["c1"]["label"] == "success" and b["c1"]["progress"] == [0.1, 0.5, 0.9]
    assert b["c1"]["wrist_video"] == "v/c1_wrist.mp4" and b["c1"]["task_name"] == "drawer"
    assert b["c3"]["label"] == "maybe" and "progress" not in b["c3"]


def test_step_metrics_tables_become_curves(tmp_path):
    demo = tmp_path / "demos" / "robot" / "pick"
    demo.mkdir(parents=True)
    (demo / "step_metrics.csv").write_text(
        "Step,StepProgress,EpisodeSuccess,MP\n1,0.2,0,20\n2,0.7,1,70\n"
    )
    (tmp_path / "demos" / "bad").mkdir()
    (tmp_path / "demos" / "bad" / "step_metrics.csv").write_text("Step,Other\n1,2\n")
    out = tmp_path / "curves.jsonl"
    assert convert(str(tmp_path / "demos"), "--from", "prm", "--out", str(out)) == 0
    assert rows(out) == [{"case_id": "robot/pick", "progress": [0.2, 0.7], "label": 1}]


GLIDE_TRUTH = [
    {
        "id": 7,
        "video_name": "a.mp4",
        "game_name": "G",
        "no_bugs": False,
        "bugs": ["car floats", "wall flickers", "no nodes"],
        "time_nodes": [[[3.0, 4.0], [1.0, 2.0]], [[5.0, 6.0]]],
    },
    {"video_name": "b.mp4", "no_bugs": True, "bugs": [], "time_nodes": []},
]
GLIDE_REPORT = [
    {
        "video_name": "a.mp4",
        "bugs": ["the car is floating", "flicker"],
        "time_nodes": [[[1.5, 3.5]], [[5.5, 7.0]]],
    },
    {"video_name": "b.mp4", "no_bugs": True, "bugs": [], "time_nodes": []},
]


def test_glide_files_become_untyped_events_scored_by_gazes_glide_protocol(tmp_path, capsys):
    """GLiDE's bugs arrive with no type, dimension or severity invented, and a multi-interval
    bug keeps its intervals: IoU is over the set (worked by hand below)."""
    gt, report = tmp_path / "groundtruth.json", tmp_path / "batch_report.json"
    gt.write_text(json.dumps(GLIDE_TRUTH))
    report.write_text(json.dumps(GLIDE_REPORT))
    manifest, preds = tmp_path / "m.jsonl", tmp_path / "p.jsonl"
    assert convert(str(gt), "--from", "glide", "--out", str(manifest)) == 0
    assert "left out (1): no time nodes: no span" in capsys.readouterr().err
    assert convert(str(report), "--from", "glide", "--out", str(preds)) == 0
    a = rows(manifest)[0]
    floats = a["events"][0]
    assert floats == {
        "start_s": 1.0,
        "end_s": 4.0,
        "description": "car floats",
        "spans": [[1.0, 2.0], [3.0, 4.0]],
    }  # no type, dimension or severity: none was given
    assert a["metadata"]["glide"] == {
        "video_name": "a.mp4",
        "id": 7,
        "game_name": "G",
        "no_bugs": False,
    }
    assert "instruction" not in a  # GLiDE gives none; scoring does not need one
    table = tmp_path / "t.jsonl"
    ratings = {("the car is floating", "car floats"): 1.0, ("flicker", "wall flickers"): 0.8}
    table.write_text(
        "".join(
            json.dumps({"a": p, "b": r, "s": ratings.get((p, r), 0.0)}) + "\n"
            for p in ("the car is floating", "flicker")
            for r in ("car floats", "wall flickers")
        )
    )
    out = tmp_path / "s.json"
    args = ["bench", "score", str(manifest), str(preds), "--protocol", "glide", "--bootstrap", "0"]
    assert run([*args, "--judge", f"table:{table}", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    # pairs: floating<->floats rated 5, flicker<->flickers rated 4; P = R = 9 / (5 * 2)
    assert result["precision"] == result["recall"] == 0.9
    # IoU: [1.5, 3.5] vs {[1, 2], [3, 4]}: 1.0 / 3.0; [5.5, 7] vs [5, 6]: 0.5 / 2.0
    assert result["temporal_miou"] == round((1 / 3 + 0.25) / 2, 6)
    assert result["severe_event_recall"] is None and result["sev_at_1"] is None
    assert result["clean_accuracy"] == 1.0
    assert run([*args, "--judge", "type", "--out", str(out)]) == 2
    assert "some events have none" in capsys.readouterr().err
    back = tmp_path / "back.json"
    assert convert(str(manifest), "--to", "glide", "--out", str(back)) == 0
    videos, _ = read_glide(back)
    assert videos["a"].bugs == ["car floats", "wall flickers"]  # the bug without nodes was left out
    assert videos["a"].time_nodes == [[(1.0, 2.0), (3.0, 4.0)], [(5.0, 6.0)]]
    assert videos["a"].extra == {"id": 7, "game_name": "G", "no_bugs": False}
    assert convert(str(manifest), "--to", "robogaze", "--out", str(tmp_path / "rg")) == 2
    assert "without a type cannot be a RoboGaze event" in capsys.readouterr().err


def test_a_manifest_without_instructions_cannot_be_run(tmp_path, capsys):
    gt = tmp_path / "groundtruth.json"
    gt.write_text(json.dumps(GLIDE_TRUTH))
    manifest = tmp_path / "m.jsonl"
    assert convert(str(gt), "--from", "glide", "--out", str(manifest)) == 0
    code = run(["bench", "run", str(manifest), "--method", "pixel", "--out", str(tmp_path / "r")])
    assert code == 2
    assert "instruction is empty" in capsys.readouterr().err


def test_progress_metrics_read_toolkit_rows_under_gazes_definitions(tmp_path):
    """`progress metrics --format prm`: a toolkit manifest scored by gaze's own definitions in
    one step (label words as 0/1, curves by path), without --compat."""
    (tmp_path / "c2.json").write_text(json.dumps([{"progress": 0.0}, {"progress": 0.2}]))
    toolkit = tmp_path / "manifest.jsonl"
    jsonl(
        toolkit,
        [
            {
                "case_id": "c1",
                "task_name": "drawer",
                "video": "a.mp4",
                "label": "success",
                "progress": [0.0, 0.5, 1.0],
            },
            {"case_id": "c2", "video": "b.mp4", "label": "failed", "progress_path": "c2.json"},
            {"case_id": "c3", "video": "c.mp4", "progress_processed": [0.1]},
        ],
    )
    out = tmp_path / "opd.json"
    args = ["progress", "metrics", str(toolkit), "--format", "prm", "--success-source", "label"]
    assert run([*args, "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    cases = {c["case_id"]: c for c in result["cases"]}
    assert set(cases) == {"c1", "c2"} and cases["c1"]["task"] == "drawer"
    assert cases["c1"]["metrics"]["SR"] == 1.0 and cases["c2"]["metrics"]["SR"] == 0.0
    assert cases["c2"]["progress_raw"] == [0.0, 0.2]
    assert result["import"]["skipped_by_reason"] == {
        "only a processed curve (progress_processed): no raw curve": 1
    }
    assert run(["progress", "metrics", str(toolkit), "--out", str(out)]) == 2  # gaze format
