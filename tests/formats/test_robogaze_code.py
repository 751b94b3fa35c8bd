"""RoboGaze's original files scored as its original ``scripts/evaluate.py`` scores them
(`--format robogaze --compat robogaze-code`), on small files written here in its format: frames
given or from ``start_time`` and ``video_meta.fps`` (inline or a sibling ``video_meta.json``), a
dataset folder in front of an id, ``human_severity`` for a null severity, ``note`` for a
description, ``_``-files skipped, clips without a report dropped, IoU without +1, severity
within 1 as 0 for a clip with nothing matched, NaN per-dimension F1 left out, values rounded per
clip. The expected numbers are worked by hand below."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gaze.cli.main import run
from gaze.formats.robogaze_code import CodeEvent
from gaze.metrics.robogaze_compat import bootstrap_ci, frame_iou

GROUND_TRUTH = {
    "clip_a": {
        "video_id": "clip_a",
        "task": "put the cup on the plate",
        "glitches": [
            {
                "glitch_id": "a1",
                "glitch_type": "object_teleportation",
                "start_frame": 10,
                "end_frame": 20,
                "severity": 5,
                "description": "the cup   jumps to the plate",
            },
            {
                "glitch_id": "a2",
                "glitch_type": "blur",
                "start_frame": 30,
                "end_frame": 40,
                "severity": None,
                "human_severity": 2,
                "note": "the frames blur",
            },
        ],
    },
    "clip_b": {  # found through source_dataset__source_video_id
        "video_id": "gt_b",
        "source_dataset": "gr1_sim",
        "source_video_id": "ep7",
        "task": "open the drawer",
        "glitches": [
            {
                "glitch_type": "failed_grasp",
                "start_frame": 5,
                "end_frame": 5,
                "severity": 4,
                "description": "the gripper closes on air",
            }
        ],
    },
    "clip_c": {"video_id": "clip_c", "task": "wave", "glitches": []},
    "clip_d": {"video_id": "clip_d", "task": "no report for me", "glitches": []},
    "_index": {"not": "a clip"},
    "broken": {"video_id": "broken", "events": []},
}
REPORTS = {
    "clip_a/report.json": {
        "video_id": "clip_a",
        "task_instruction": "put the cup on the plate",
        "video_meta": {"fps": 10.0},
        "glitches": [
            {
                "event_id": "p1",
                "glitch_type": "object_teleportation",
                "dimension": "physical_plausibility",
                "start_time": 1.5,
                "end_time": 2.5,
                "severity": 4,
                "description": "cup teleports onto the plate",
            },
            {
                "event_id": "p2",
                "glitch_type": "impossible_motion",
                "start_frame": 30,
                "end_frame": 35,
                "severity": 3,
                "description": "frames become blurry",
            },
        ],
    },
    "gr1_sim/ep7/report.json": {
        "glitches": [
            {
                "glitch_type": "failed_grasp",
                "start_time": 0.5,
                "end_time": 0.5,
                "severity": 4,
                "description": "grasp misses",
            }
        ]
    },
    "clip_c/report.json": {"video_id": "clip_c", "glitches": [{"glitch_type": "blur"}]},
    "stray/report.json": {"video_id": "stray", "glitches": []},
}
SIBLING_META = {"gr1_sim/ep7/video_meta.json": {"fps": 10.0}}
AXES = {  # the original judge's three 0-5 axes; S = sum / 15
    ("cup teleports onto the plate", "the cup jumps to the plate"): (5, 4, 4),
    ("frames become blurry", "the frames blur"): (4, 3, 2),
    ("cup teleports onto the plate", "the frames blur"): (0, 0, 0),
    ("frames become blurry", "the cup jumps to the plate"): (0, 0, 0),
}


def write_files(root: Path) -> tuple[Path, Path, Path]:
    gt, reports, table = root / "gt", root / "outputs", root / "judged.jsonl"
    gt.mkdir()
    for name, data in GROUND_TRUTH.items():
        (gt / f"{name}.json").write_text(json.dumps(data))
    for rel, data in {**REPORTS, **SIBLING_META}.items():
        (reports / rel).parent.mkdir(parents=True, exist_ok=True)
        (reports / rel).write_text(json.dumps(data))
    table.write_text(
        "".join(
            json.dumps({"a": a, "b": b, "s": sum(x) / 15.0}) + "\n" for (a, b), x in AXES.items()
        )
    )
    return gt, reports, table


@pytest.fixture
def scored(tmp_path):
    gt, reports, table = write_files(tmp_path)
    out = tmp_path / "m.json"
    code = run(
        [
            "bench",
            "score",
            str(gt),
            str(reports),
            "--format",
            "robogaze",
            "--compat",
            "robogaze-code",
            "--judge",
            f"table:{table}",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    return json.loads(out.read_text())


def test_frame_iou_has_no_plus_one():
    one = CodeEvent("x", "d", "t", 5, 5, 0, "")
    assert frame_iou(one, one) == 0.0  # two equal one-frame spans: union 0
    assert (
        frame_iou(CodeEvent("x", "d", "t", 10, 20, 0, ""), CodeEvent("y", "d", "t", 15, 25, 0, ""))
        == 5 / 15
    )


def test_clips_are_paired_and_left_out_as_the_original_does(scored):
    assert scored["compat"].startswith("robogaze-code")
    assert [r["video_id"] for r in scored["per_clip"]] == ["clip_a", "clip_c", "gt_b"]
    assert scored["left_out"] == {"reference_only": ["clip_d"], "predicted_only": ["stray"]}
    skipped = scored["import"]["reference"]["skipped_by_reason"]
    assert skipped == {"no top-level 'glitches' list": 1}  # broken.json; _index.json not read


def test_per_clip_values_worked_by_hand(scored):
    a, c, b = scored["per_clip"]
    # clip_a: p1 frames 15-25 vs a1 10-20: IoU 5/15; S 13/15; same dimension -> matched.
    # p2 (impossible_motion -> physical_plausibility) 30-35 vs a2 (blur) 30-40: IoU 0.5, S 9/15.
    s1, s2, u1, u2 = 13 / 15, 9 / 15, 5 / 15, 0.5
    assert a["A_matched"] == 2
    assert a["P_desc"] == round((s1 + s2) / 2, 4) == a["R_desc"]
    assert a["mIoU"] == round((u1 + u2) / 2, 4)
    assert a["F1xIoU"] == round((s1 * u1 + s2 * u2) / 2, 4)
    # severities: 4 vs 5 within 1; 3 vs human_severity 2 within 1
    assert a["sev_within_1"] == 1.0
    assert a["sev_weighted_P"] == round((s1 * 4 + s2 * 3) / 7, 4)
    assert a["sev_weighted_R"] == round((s1 * 5 + s2 * 2) / 7, 4)
    # gt_b: both spans are frame 5 -> IoU 0 (no +1): nothing matched, severity within 1 is 0
    assert b["A_matched"] == 0 and b["F1_desc"] == 0.0 and b["sev_within_1"] == 0.0
    # clip_c: clean reference, one predicted event: not an event clip
    assert c["M_gt"] == 0 and c["N_pred"] == 1


ORIGINAL_SUMMARY = {
    "n_clips": 3,
    "n_event_eval_clips": 2,
    "macro_F1_desc": 0.3666,
    "macro_F1_desc_CI95": [0.0, 0.7333],
    "macro_mIoU": 0.2084,
    "macro_F1xIoU": 0.1472,
    "macro_F1xIoU_CI95": [0.0, 0.2944],
    "macro_sev_within_1": 0.5,
    "macro_sev_weighted_F1": 0.3855,
}
"""What the original ``scripts/evaluate.py`` (76d353d) printed for these files, run outside the
repository with its judge replaced by ``AXES`` (docs/reproduce.md)."""


def test_summary_is_what_the_original_printed(scored):
    assert {k: scored["summary"][k] for k in ORIGINAL_SUMMARY} == ORIGINAL_SUMMARY


def test_summary_worked_by_hand(scored):
    summary = scored["summary"]
    a, _, b = scored["per_clip"]
    assert summary["n_clips"] == 3 and summary["n_event_eval_clips"] == 2
    assert summary["macro_F1_desc"] == round((a["F1_desc"] + b["F1_desc"]) / 2, 4)
    assert summary["macro_sev_within_1"] == 0.5
    assert summary["macro_F1_desc_CI95"] == bootstrap_ci([a["F1_desc"], b["F1_desc"]])
    per_dim = summary["per_dim_F1_desc"]
    # physical_plausibility in clip_a: p1 and p2 predicted, a1 referenced; only p1-a1 counts
    p, r = (13 / 15) / 2, (13 / 15) / 1
    assert per_dim["physical_plausibility"] == round(2 * p * r / (p + r), 4)
    # visual_quality: clip_a has a2 (F1 0: its match is cross-dimension) and clip_c predicts
    # blur with no reference (F1 0): mean 0; instruction_consistency is NaN everywhere: 0.0
    assert per_dim["visual_quality"] == 0.0 and per_dim["instruction_consistency"] == 0.0
    assert summary["clip_detection"] == {
        "n_clips": 3,
        "n_clean_gt": 1,
        "n_glitchy_gt": 2,
        "TN": 0,
        "FP": 1,
        "FN": 0,
        "TP": 2,
        "clean_clip_accuracy": 0.0,
        "glitchy_clip_recall": 1.0,
        "precision": round(2 / 3, 4),
        "recall": 1.0,
        "F1": 0.8,
    }


def test_gaze_manifest_scored_by_the_original_rules(tmp_path):
    """A gaze manifest and predictions go through the same scorer: times become frames as the
    original turns them (round(t * fps)): 1.5-2.5 s at 10 fps is frames 15-25."""
    event = {
        "dimension": "physical_plausibility",
        "type": "object_teleportation",
        "severity": 5,
        "description": "cup jumps",
    }
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        json.dumps(
            {
                "clip_id": "k",
                "video": "k.mp4",
                "instruction": "move the cup",
                "fps": 10,
                "events": [{**event, "start_s": 1.0, "end_s": 2.0}],
            }
        )
        + "\n"
    )
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        json.dumps({"clip_id": "k", "events": [{**event, "start_s": 1.5, "end_s": 2.5}]}) + "\n"
    )
    out = tmp_path / "o.json"
    assert (
        run(
            [
                "bench",
                "score",
                str(manifest),
                str(preds),
                "--compat",
                "robogaze-code",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    clip = json.loads(out.read_text())["per_clip"][0]
    assert clip["mIoU"] == round(5 / 15, 4)  # frames 10-20 vs 15-25
    assert clip["F1_desc"] == 1.0  # lexical judge: identical descriptions


def test_type_judge_is_refused_in_one_line(tmp_path, capsys):
    gt, reports, _ = write_files(tmp_path)
    args = ["bench", "score", str(gt), str(reports), "--format", "robogaze"]
    code = run(
        [*args, "--compat", "robogaze-code", "--judge", "type", "--out", str(tmp_path / "o")]
    )
    assert code == 2
    assert "robogaze-code judges descriptions" in capsys.readouterr().err


def test_gaze_protocol_options_are_refused_with_a_peer_scorer(tmp_path, capsys):
    gt, reports, _ = write_files(tmp_path)
    args = ["bench", "score", str(gt), str(reports), "--format", "robogaze"]
    args += ["--compat", "robogaze-code", "--out", str(tmp_path / "o")]
    assert run([*args, "--slice", "generator"]) == 2
    assert "drop --versus, --slice and --protocol" in capsys.readouterr().err
