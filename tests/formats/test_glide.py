"""GLiDE's files scored as GLiDE's evaluator scores them (`--format glide --compat glide-code`),
on small files written here in its format, hand-computed: multi-interval IoU, zero-length
intervals, zero-rated pairs kept, videos on one side only ignored, unusable rows skipped."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from gaze.metrics.glide_compat import interval_iou

GROUNDTRUTH = [
    {
        "id": 1,
        "video_name": "a.mp4",
        "game_name": "G",
        "no_bugs": False,
        "bugs": ["car floats above the road", "texture flickers on the wall"],
        "time_nodes": [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]],
    },
    {"video_name": "b.mp4", "bugs": ["player falls through floor"], "time_nodes": [[[2.0, 2.0]]]},
    {"video_name": "c.mp4", "no_bugs": True, "bugs": [], "time_nodes": []},
    {"video_name": "d.mp4", "bugs": ["only in the reference"], "time_nodes": [[[0, 1]]]},
    {"video_name": "f.mp4", "bugs": ["door opens by itself"], "time_nodes": [[[0.0, 1.0]]]},
    {"video_name": 5, "bugs": []},
]
REPORT = [
    {
        "video_name": "a.mp4",
        "no_bugs": False,
        "bugs": ["the car is floating", "wall texture flickering", "an extra false alarm"],
        "time_nodes": [[[1.5, 3.5]], [[5.5, 7.0]]],  # the third bug has no time nodes
    },
    {"video_name": "b.mp4", "bugs": ["fell through the floor"], "time_nodes": [[[9.0, 9.0]]]},
    {"video_name": "c", "bugs": ["spurious"], "time_nodes": [[[0.0, 1.0]]]},
    {"video_name": "f.mp4", "bugs": ["sky turns green"], "time_nodes": [[[0.5, 1.5]]]},
    {"video_name": "z.mp4", "bugs": ["a video the reference lacks"], "time_nodes": [[[0, 1]]]},
    {"video_name": "e.mp4", "bugs": "not a list"},
]
RATINGS = {
    ("the car is floating", "car floats above the road"): 5,
    ("the car is floating", "texture flickers on the wall"): 0,
    ("wall texture flickering", "car floats above the road"): 0,
    ("wall texture flickering", "texture flickers on the wall"): 4,
    ("an extra false alarm", "car floats above the road"): 1,
    ("an extra false alarm", "texture flickers on the wall"): 0,
    ("fell through the floor", "player falls through floor"): 3,
    ("sky turns green", "door opens by itself"): 0,
}


@pytest.fixture
def files(tmp_path):
    gt, pred, table = tmp_path / "groundtruth.json", tmp_path / "batch_report.json", tmp_path / "t"
    gt.write_text(json.dumps(GROUNDTRUTH, indent=2))
    pred.write_text(json.dumps(REPORT, indent=2))
    table.write_text(
        "".join(json.dumps({"a": a, "b": b, "s": r / 5}) + "\n" for (a, b), r in RATINGS.items())
    )
    return gt, pred, table


def test_interval_iou_follows_glides_conventions():
    assert interval_iou([(1, 2), (3, 4)], [(1.5, 3.5)]) == pytest.approx(1 / 3)  # merged lists
    assert interval_iou([(2, 2)], [(9, 9)]) == 1.0  # zero union, no overlap: 1, as GLiDE has it
    assert interval_iou([], []) == 1.0 and interval_iou([(0, 1)], []) == 0.0
    assert interval_iou([(0, 2), (1, 3)], [(0, 3)]) == 1.0  # overlapping reference intervals
    assert interval_iou([(0, 1)], [(1, 2)]) == 0.0  # touching is no overlap


def test_score_as_glides_evaluator(files, tmp_path, capsys):
    gt, pred, table = files
    out = tmp_path / "glide.json"
    argv = ["bench", "score", str(gt), str(pred), "--format", "glide", "--compat", "glide-code"]
    assert run([*argv, "--judge", f"table:{table}", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["compat"].startswith("glide-code")
    summary = result["summary"]
    # videos a, b, c, f are in both files; d (reference only) and z (report only) are ignored
    assert (summary["num_videos"], summary["num_gt_bugs"], summary["num_pred_bugs"]) == (4, 4, 6)
    # a: (0,0) rated 5 IoU 1/3 and (1,1) rated 4 IoU 0.5/2; b: 3 with IoU 1 (two instants);
    # f: rated 0 but kept, IoU 0.5/1.5
    scores, ious = [5, 4, 3, 0], [1 / 3, 0.25, 1.0, 1 / 3]
    assert summary["num_matched"] == 4
    assert summary["mean_score"] == pytest.approx(3.0)
    assert summary["mean_iou"] == pytest.approx(sum(ious) / 4)
    p, r = 12 / (5 * 6), 12 / (5 * 4)
    assert (summary["precision"], summary["recall"]) == (pytest.approx(p), pytest.approx(r))
    assert summary["f1"] == pytest.approx(2 * p * r / (p + r))
    weighted = sum(s * u for s, u in zip(scores, ious, strict=True))
    pu, ru = weighted / 30, weighted / 20
    assert summary["f1_iou"] == pytest.approx(2 * pu * ru / (pu + ru))
    by_video = {v["video_name"]: v for v in result["video_results"]}
    assert by_video["a"]["matches"][0] == {
        "pred_idx": 0,
        "gt_idx": 0,
        "score": 5,
        "iou": pytest.approx(1 / 3),
    }
    assert result["left_out"] == {"reference_only": ["d"], "predicted_only": ["z"]}
    # unusable rows are skipped and counted, not fatal
    assert result["import"]["reference"]["skipped"] == 1
    assert result["import"]["predictions"]["skipped_by_reason"] == {
        "bugs is not a list of descriptions": 1
    }
    assert "glide-code" in capsys.readouterr().out


def test_glide_files_scored_by_gazes_glide_protocol_in_one_step(files, tmp_path, capsys):
    """`--format glide --protocol glide`: the files read as `gaze convert --from glide` reads
    them (untyped, multi-interval events; bugs without time nodes left out and counted) and
    scored by gaze's own glide protocol; reports for videos the ground truth lacks are ignored,
    as GLiDE does, and listed."""
    gt, pred, table = files
    out = tmp_path / "x.json"
    argv = ["bench", "score", str(gt), str(pred), "--format", "glide", "--out", str(out)]
    assert run(argv) == 2  # frame-level IoU needs an fps GLiDE's files do not give
    err = capsys.readouterr().err
    assert "--protocol glide (gaze's) or --compat glide-code" in err and "Traceback" not in err
    assert run([*argv, "--protocol", "glide", "--judge", f"table:{table}", "--bootstrap", "0"]) == 0
    result = json.loads(out.read_text())
    assert result["import"]["predicted_only"] == ["z"]
    # a, b, c, f are in both files; d has no report (left out, as GLiDE does)
    assert result["n_clips"] == 4 and result["left_out"] == ["d"]
    # ratings kept by gaze's protocol: a 5 and 4 (the third report bug has no time nodes and is
    # left out on import), b 3, f 0: P = 12 / (5 * 5) over the five predicted bugs still held
    assert result["precision"] == pytest.approx(12 / 25)
    assert result["import"]["predictions"]["skipped_by_reason"]["no time nodes: no span"] == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"video_name": "a"}')
    argv = ["bench", "score", str(bad), str(pred), "--format", "glide", "--compat", "glide-code"]
    assert run([*argv, "--out", str(out)]) == 2
    assert "a JSON array of per-video objects" in capsys.readouterr().err
    assert run([*argv[:2], str(gt), *argv[3:], "--judge", "type", "--out", str(out)]) == 2
    assert "GLiDE's bugs have none" in capsys.readouterr().err


def test_a_glide_row_gaze_cannot_hold_is_left_out_and_counted(tmp_path, capsys):
    """A span past any clip's length is skipped and counted, the same way whether the file is
    converted or scored directly (it used to end the direct scoring in a traceback)."""
    rows = [
        {"video_name": "a.mp4", "bugs": ["fine"], "time_nodes": [[[1.0, 2.0]]]},
        {"video_name": "b.mp4", "bugs": ["too long"], "time_nodes": [[[0.0, 2e6]]]},
    ]
    gt, pred = tmp_path / "groundtruth.json", tmp_path / "batch_report.json"
    gt.write_text(json.dumps(rows))
    pred.write_text(json.dumps(rows))
    out = tmp_path / "x.json"
    argv = ["bench", "score", str(gt), str(pred), "--format", "glide", "--protocol", "glide"]
    assert run([*argv, "--bootstrap", "0", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["n_clips"] == 1
    reasons = result["import"]["reference"]["skipped_by_reason"]
    assert list(reasons) == ["not a valid row (Input should be less than or equal to 1000000)"]
    manifest = tmp_path / "m.jsonl"
    assert run(["convert", str(gt), "--from", "glide", "--out", str(manifest)]) == 0
    assert len(manifest.read_text().splitlines()) == 1
    assert "Traceback" not in capsys.readouterr().err
