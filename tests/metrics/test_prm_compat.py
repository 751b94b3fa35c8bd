"""`progress metrics --compat prm` follows the PRM-as-a-Judge toolkit's scorer where it differs
from gaze's own protocol; every expected value below is worked out by hand from its rules."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from gaze.metrics.prm_compat import case_metrics, drawdown_recovery, summarize

RISING = [0.0, 0.5, 1.0]  # success, no drawdown
DIPPED = [0.4, 0.2, 0.3]  # failure, drawdown 0.2 recovered 0.1


def case(curve, label=None):
    return {"curve": curve, "metrics": case_metrics(curve), "label": label}


def test_a_case_without_drawdown_has_drr_one_and_sr_from_its_curve():
    m = case_metrics(RISING)
    assert m["DRR"] == 1.0 and m["SR"] == 1.0 and m["MP"] == 1.0
    # L = 0.5 + 0.5 = 1.0: PPL 1.0; STR: the first step (0 -> 0) is still: 1/3
    assert m["PPL"] == 1.0 and m["STR"] == pytest.approx(1 / 3)
    d = case_metrics(DIPPED)
    # running peak from p_0 = 0: 0.4, 0.4, 0.4 -> regret 0, 0.2, 0.1 -> 0.3 / 3 / MP 0.4 = 0.25
    assert d["CRA"] == pytest.approx(0.25)
    assert d["DRR"] == pytest.approx((0.1 + 1e-6) / (0.2 + 1e-6))
    assert drawdown_recovery([0.5, 0.5]) == 1.0


def test_empty_eligible_subsets_are_zero_and_the_median_table_repeats_binary_rates():
    tables = summarize([case(RISING), case([0.0, 0.6, 1.0])], "progress")
    assert tables["mean"]["FNS"] == 0.0  # no failure: 0.0, where gaze says null
    assert tables["mean"]["DRR"] == 0.0  # no drawdown case
    assert tables["median"]["SR"] == tables["mean"]["SR"] == 1.0
    assert tables["median"]["M50"] == 1.0


def test_labels_decide_success_only_in_the_aggregates():
    labelled = [case(RISING, "failure"), case(DIPPED, "success")]
    tables = summarize(labelled, "label")
    assert tables["mean"]["SR"] == 0.5
    # FNS of the labelled failure (MP 1, M75 1, M50 1): 0.5 + 0.3 + 0.2 = 1.0
    assert tables["mean"]["FNS"] == pytest.approx(1.0)
    # SQS of the labelled success DIPPED: PPL = 0.16 / 0.7, CRA 0.25, STR 0
    sqs = 0.5 * (0.16 / 0.7) + 0.3 * 0.75 + 0.2 * 1.0
    assert tables["mean"]["SQS"] == pytest.approx(sqs)
    assert [c["metrics"]["SR"] for c in labelled] == [1.0, 0.0]  # per case: the curve


def test_the_command_groups_by_benchmark_model_and_task_name(tmp_path, capsys):
    rows = [
        {
            "case_id": "a",
            "benchmark": "libero",
            "model": "m1",
            "task_name": "t1",
            "progress_processed": RISING,
            "label": "success",
        },
        {
            "case_id": "b",
            "benchmark": "libero",
            "model": "m1",
            "task_name": "t2",
            "progress_processed": DIPPED,
            "label": "failure",
        },
        {"case_id": "c", "model": "m2", "progress": [10, 50, 100]},
    ]
    curves = tmp_path / "per_case.jsonl"
    curves.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "opd.json"
    code = run(
        [
            "progress",
            "metrics",
            str(curves),
            "--out",
            str(out),
            "--compat",
            "prm",
            "--success-source",
            "label",
        ]
    )
    assert code == 0, capsys.readouterr().err
    result = json.loads(out.read_text())
    assert result["compat"].startswith("prm")
    board = result["leaderboard"]
    assert [(r["benchmark"], r["model"], r["num_tasks"]) for r in board["mean"]] == [
        ("libero", "m1", 2),
        ("manifest", "m2", 1),
    ]
    assert [(g["benchmark"], g["task"]) for g in board["groups"]] == [
        ("libero", "t1"),
        ("libero", "t2"),
        ("manifest", "all"),
    ]
    assert board["mean"][0]["SR"] == 0.5 and board["mean"][0]["DRR"] == pytest.approx(
        (0.1 + 1e-6) / (0.2 + 1e-6)
    )
    assert "compat prm" in capsys.readouterr().out


def test_compat_prm_refuses_v1(tmp_path, capsys):
    curves = tmp_path / "c.jsonl"
    curves.write_text(json.dumps({"case_id": "a", "progress": [0.1]}) + "\n")
    args = ["progress", "metrics", str(curves), "--out", str(tmp_path / "o.json")]
    assert run([*args, "--compat", "prm", "--v1"]) == 2
    assert "drop --v1" in capsys.readouterr().err


def test_the_toolkits_manifest_with_progress_paths_is_read_as_it_reads_it(tmp_path):
    (tmp_path / "curves").mkdir()
    (tmp_path / "curves" / "a.json").write_text(json.dumps([0.0, 0.5, 1.0]))
    (tmp_path / "curves" / "b.json").write_text(json.dumps({"progress": [0.4, 0.2, 0.3]}))
    (tmp_path / "curves" / "c.json").write_text(json.dumps([{"progress": 0.4}, {"progress": 0.2}]))
    rows = [
        {"case_id": "a", "task": "Insert the flowers.", "video": "a.mp4",
         "progress_path": "curves/a.json", "label": "SUCCESS", "benchmark": "demo",
         "policy": "p1"},
        {"case_id": "b", "task_id": "t2", "video": "b.mp4", "progress_path": "curves/b.json",
         "label": "failure", "benchmark": "demo", "model": "m1"},
        {"case_id": "c", "metadata": {"task_name": "t3"}, "video": "c.mp4",
         "progress_path": "curves/c.json"},
    ]  # fmt: skip
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from gaze.bench.judges_jobs import progress_metrics

    result = progress_metrics(manifest, compat="prm", success_source="label")
    cases = {c["case_id"]: c for c in result["cases"]}
    assert (cases["a"]["model"], cases["a"]["task"]) == ("p1", "Insert the flowers.")
    assert (cases["b"]["model"], cases["b"]["task"]) == ("m1", "t2")
    assert (cases["c"]["benchmark"], cases["c"]["model"], cases["c"]["task"]) == (
        "manifest",
        "default",
        "t3",
    )
    board = {(r["benchmark"], r["model"]): r for r in result["leaderboard"]["mean"]}
    assert board[("demo", "p1")]["SR"] == 1.0  # "SUCCESS", lowercased, is a success
    assert board[("demo", "m1")]["SR"] == 0.0
