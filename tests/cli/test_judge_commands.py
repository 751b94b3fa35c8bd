"""`gaze progress metrics`, `gaze bench agreement`, `gaze bench direction`: outputs and bad rows."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from tests.cli.test_cli import one_line_error


def jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_progress_metrics_output(tmp_path, capsys):
    curves = jsonl(
        tmp_path / "c.jsonl",
        [
            {"case_id": "a", "model": "m1", "task": "t1", "progress": [0, 20, 40, 60, 80, 100]},
            {
                "case_id": "b",
                "model": "m1",
                "task": "t2",
                "progress": [0.2, 0.6, 0.3, 0.45],
                "label": 0,
            },
            {
                "case_id": "c",
                "model": "m2",
                "task": "t1",
                "progress": [10, 30],
                "kind": "increments",
                "label": 1,
            },
        ],
    )
    out = tmp_path / "opd.json"
    assert run(["progress", "metrics", str(curves), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert [c["case_id"] for c in data["cases"]] == ["a", "b", "c"]
    first = data["cases"][0]
    assert first["progress_raw"] == [0, 20, 40, 60, 80, 100]
    assert set(first["metrics"]) == {
        "MP",
        "MC25",
        "MC50",
        "MC75",
        "SR",
        "PPL",
        "CRA",
        "STR",
        "DRR",
        "FNS",
        "SQS",
    }
    # increments 10, 30 -> 10, 40 -> /100 -> .1, .4 -> smoothed over two taps each:
    # (.4*.1 + .2*.4)/.6 = .2 and (.2*.1 + .4*.4)/.6 = .3
    assert data["cases"][2]["progress_processed"] == pytest.approx([0.2, 0.3])
    models = {r["model"]: r for r in data["leaderboard"]["mean"]}
    assert models["m1"]["n"] == 2 and models["m2"]["n"] == 1
    assert {(g["model"], g["task"]) for g in data["leaderboard"]["groups"]} == {
        ("m1", "t1"),
        ("m1", "t2"),
        ("m2", "t1"),
    }
    assert "OPD leaderboard" in capsys.readouterr().out
    labelled = tmp_path / "opd_label.json"
    assert (
        run(
            [
                "progress",
                "metrics",
                str(curves),
                "--out",
                str(labelled),
                "--success-source",
                "label",
                "--v1",
            ]
        )
        == 2
    )  # case a has no label
    assert "needs a 0/1 'label'" in one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"case_id": "a", "progress": [0.1, float("nan")]}, "NaN"),
        ({"case_id": "a", "progress": [0.1, "high"]}, "non-numeric"),
        ({"case_id": "a", "progress": []}, "empty"),
        ({"case_id": "a", "progress": 0.5}, "must be a list"),
        ({"progress": [0.1]}, "missing case_id"),
    ],
)
def test_bad_curves_name_the_row(tmp_path, capsys, row, message):
    lines = [json.dumps({"case_id": "ok", "progress": [0.1]}), json.dumps(row)]
    (tmp_path / "c.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "o.json"
    assert run(["progress", "metrics", str(tmp_path / "c.jsonl"), "--out", str(out)]) == 2
    err = one_line_error(capsys.readouterr().err)
    assert "line 2" in err and message in err and not out.exists()


def manifest_rows():
    base = {"instruction": "pick", "fps": 10, "duration_s": 12, "events": []}
    return [
        {
            **base,
            "clip_id": "a",
            "video": "a.mp4",
            "pa": 4,
            "ia": 3,
            "generator": "g1",
            "condition_id": "k1",
            "progress_intervals": [
                {"start_s": 0, "end_s": 5, "label": 1},
                {"start_s": 5, "end_s": 9, "label": -1},
            ],
        },
        {
            **base,
            "clip_id": "b",
            "video": "b.mp4",
            "pa": 2,
            "ia": 5,
            "generator": "g2",
            "condition_id": "k2",
        },
        {
            **base,
            "clip_id": "c",
            "video": "c.mp4",
            "pa": 3.5,
            "generator": "g2",
            "condition_id": "k2",
        },
    ]


def test_agreement_keys_and_generator_leaderboard(tmp_path, capsys):
    manifest = jsonl(tmp_path / "m.jsonl", manifest_rows())
    preds = jsonl(
        tmp_path / "p.jsonl",
        [
            {"clip_id": "a", "events": [], "pa": 4, "ia": 2},
            {"clip_id": "b", "events": [], "pa": 3, "ia": 5},
        ],
    )
    out = tmp_path / "agr.json"
    assert (
        run(
            [
                "bench",
                "agreement",
                str(manifest),
                str(preds),
                "--out",
                str(out),
                "--bootstrap",
                "200",
            ]
        )
        == 0
    )
    data = json.loads(out.read_text())
    for axis in ("pa", "ia"):
        assert set(data[axis]) == {
            "pearson",
            "spearman",
            "exact",
            "within_1",
            "mse",
            "over_rate",
            "under_rate",
            "n",
        }
    assert data["pa"]["n"] == 2 and data["pa"]["exact"] == 0.5 and data["pa"]["mse"] == 0.5
    assert set(data["overall"]) >= {"pearson", "exact", "mse"}
    assert data["skipped"] == [{"clip_id": "c", "axis": "pa", "reason": "no prediction"}]
    board = {r["generator"]: r for r in data["leaderboard"]}
    assert board["g1"]["average"] == 3.0 and board["g2"]["pa"] == 3.0
    # two clips, two condition groups: a resample holds 0, 1 or 2 exact pairs of PA's one
    assert data["ci"]["pa"]["exact"] == [0.0, 1.0] and data["ci"]["pa"]["within_1"] == [1.0, 1.0]
    low, high = data["ci"]["ia"]["mse"]
    assert low <= data["ia"]["mse"] <= high


def test_agreement_refuses_scores_outside_1_to_5(tmp_path, capsys):
    rows = manifest_rows()
    rows[1]["pa"] = 7
    manifest = jsonl(tmp_path / "m.jsonl", rows)
    preds = jsonl(tmp_path / "p.jsonl", [{"clip_id": "a", "events": [], "pa": 4}])
    assert (
        run(["bench", "agreement", str(manifest), str(preds), "--out", str(tmp_path / "o.json")])
        == 2
    )
    assert "human pa 7.0 is outside 1-5" in one_line_error(capsys.readouterr().err)


def test_direction_command(tmp_path, capsys):
    manifest = jsonl(tmp_path / "m.jsonl", manifest_rows())
    curves = jsonl(
        tmp_path / "c.jsonl",
        [
            {"case_id": "a", "progress": [0, 1, 2, 3, 4, 5, 4, 3, 2, 1]},
            {"case_id": "b", "progress": [0, 1]},
        ],
    )
    out = tmp_path / "d.json"
    assert run(["bench", "direction", str(manifest), str(curves), "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["macro_f1"] == pytest.approx(0.4) and data["n"] == 3
    assert set(data["rising"]) == {"precision", "recall", "f1"}
    assert data["skipped"] == [{"case_id": "b", "reason": "no progress_intervals in the manifest"}]
    bad = jsonl(tmp_path / "bad.jsonl", [{"case_id": "zz", "progress": [0, 1]}])
    assert run(["bench", "direction", str(manifest), str(bad), "--out", str(out)]) == 2
    assert "'zz' is not in the manifest" in one_line_error(capsys.readouterr().err)
