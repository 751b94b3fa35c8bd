"""`gaze bench run`: every method over a forge manifest with scripted backbones, failures,
resume, and screening."""

from __future__ import annotations

import asyncio
import json
import re
import shutil

import pytest

from gaze.bench.baselines import agree, baseline_settings, run_baseline
from gaze.bench.run import run_benchmark
from gaze.bench.screening import screen
from gaze.cli.main import run
from gaze.models.caller import Caller
from gaze.models.protocol import ModelRequest
from gaze.models.scripted import ScriptedBackbone, minimal_instance
from gaze.schema.events import Event
from gaze.schema.manifest import ManifestClip
from gaze.schema.report import Report
from gaze.settings.context import GazeContext
from tests.cli.test_cli import one_line_error
from tests.graph.script import text_of


@pytest.fixture
def small_manifest(forge_dir, tmp_path):
    """Three forge clips plus one whose video is missing."""
    rows = [json.loads(line) for line in (forge_dir / "manifest.jsonl").read_text().splitlines()]
    chosen = rows[:3]
    for r in chosen:
        r["video"] = str(forge_dir / r["video"])
    broken = {**chosen[0], "clip_id": "broken", "video": str(tmp_path / "gone.mp4")}
    path = tmp_path / "manifest.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*chosen, broken]))
    return path


def test_robogaze_run_records_failures_and_resumes(small_manifest, tmp_path, capsys):
    out = tmp_path / "run"
    args = [
        "bench",
        "run",
        str(small_manifest),
        "--method",
        "robogaze",
        "--model",
        "scripted:auto",
        "--out",
        str(out),
    ]
    assert run(args) == 1  # the broken clip failed; the others finished
    captured = capsys.readouterr()
    assert "3 done, 0 already done (resumed), 1 failed" in captured.err
    assert "no such file" in captured.err
    reports = sorted(p.name for p in (out / "reports").iterdir())
    assert reports == [
        "forge_s3_0000_clean.json",
        "forge_s3_0001_object_teleportation.json",
        "forge_s3_0002_object_disappearance.json",
    ]
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["method"] == "robogaze" and manifest["done"] == 3
    assert list(manifest["failed"]) == ["broken"]
    assert manifest["settings"]["model"] == "scripted:auto"
    assert manifest["calls"] > 0
    # the scripted model reports ~len/4 tokens; gaze's own estimate also counts the images
    assert manifest["estimated_input_tokens"] > manifest["input_tokens"] > 0
    assert manifest["cached_input_tokens"] == 0
    assert manifest["git"] is None or len(manifest["git"]) == 40
    # resume: nothing finished is redone
    assert run(args) == 1
    assert "0 done, 3 already done (resumed), 1 failed" in capsys.readouterr().err
    # other settings in the same folder are refused
    assert run([*args, "--top-k", "2"]) == 2
    assert "other settings" in one_line_error(capsys.readouterr().err)


def test_interrupted_clip_is_redone_and_cached_calls_not_repeated(small_manifest, tmp_path):
    out = tmp_path / "run"
    first = {"default": ScriptedBackbone(fallback_minimal=True)}
    asyncio.run(run_benchmark(small_manifest, "robogaze", out, GazeContext(), backbones=first))
    report = out / "reports" / "forge_s3_0000_clean.json"
    report.write_text(report.read_text()[:50])  # a torn file from an interruption
    backbone = ScriptedBackbone(fallback_minimal=True)
    summary = asyncio.run(
        run_benchmark(
            small_manifest, "robogaze", out, GazeContext(), backbones={"default": backbone}
        )
    )
    assert summary.done == ["forge_s3_0000_clean"] and len(summary.skipped) == 2
    assert backbone.requests == []  # every call of the redone clip came from the cache
    assert Report.model_validate_json(report.read_text()).clip_id == "forge_s3_0000_clean"


def finding(kind="object_floating", start=1.0, end=2.0, conf=0.8, desc="block floats"):
    return {
        "type": kind,
        "start_s": start,
        "end_s": end,
        "severity": 4,
        "description": desc,
        "evidence": ["t=1.00s"],
        "confidence": conf,
    }


def baseline_world(request: ModelRequest):
    if request.role == "critic":  # b3's verifier: accept the floating claim only
        lines = re.findall(r"^\[(\d+)\] (\w+)", text_of(request), re.MULTILINE)
        return {
            "verdicts": [
                {
                    "index": int(i),
                    "decision": "accept" if k == "object_floating" else "reject",
                    "reason": "seen",
                    "confidence": 0.9,
                }
                for i, k in lines
            ]
        }
    if request.sample % 2:  # b2: odd samples also see a spurious blur
        return {
            "reasoning": "r",
            "failures": [finding(start=1.1, end=2.0), finding("blur", 5, 6, desc="soft")],
        }
    return {
        "reasoning": "r",
        "failures": [finding(), finding("blur", 5, 6, desc="soft")]
        if request.sample == 0 and "Codebook:" not in text_of(request)
        else [finding()],
    }


@pytest.mark.parametrize(
    ("method", "types", "calls"),
    [
        ("cot", ["object_floating", "blur"], 1),
        ("b1", ["object_floating"], 1),
        ("b2", ["object_floating"], 5),
        ("b3", ["object_floating"], 2),
    ],
)
def test_baselines(forge_dir, forge_rows, method, types, calls):
    from gaze.video.clip import open_clip

    clip = open_clip(forge_dir / forge_rows["clean"].video, encode=True)
    frames = [
        (t, clip.jpegs[i])
        for w in clip.windows
        for i, t in zip(w.frame_indices, w.timestamps_s, strict=True)
    ]
    backbone = ScriptedBackbone(baseline_world)
    events, records, problems = asyncio.run(
        run_baseline(
            Caller({"default": backbone}),
            baseline_settings(method, GazeContext(model="scripted:auto"), samples=5),
            "put the block on the plate",
            frames,
            (0.0, clip.jpegs[0]),
            clip.info.duration_s,
        )
    )
    assert [e.type for e in events] == types and problems == []
    assert len(backbone.requests) == calls == len(records)
    if method == "b2":
        assert events[0].confidence == 1.0
        assert {r.temperature for r in backbone.requests} == {0.7}
        assert sorted(r.sample for r in backbone.requests) == [0, 1, 2, 3, 4]
    if method == "b1":
        assert "Codebook:" in text_of(backbone.requests[0])
        assert backbone.requests[0].images == 1 + 32  # initial scene + frames (capped)


def test_agreement_keeps_majority_clusters():
    from gaze.bench.baselines import Finding

    a, b = Finding.model_validate(finding()), Finding.model_validate(finding(start=1.2))
    c = Finding.model_validate(finding("blur", 5, 6))
    kept = agree([[a], [b, c], []], k=3)
    assert len(kept) == 1 and kept[0].type == "object_floating"
    assert kept[0].confidence == pytest.approx(2 / 3)


def test_baseline_methods_from_the_command_line(small_manifest, tmp_path, capsys):
    shutil.copy(small_manifest, tmp_path / "m.jsonl")
    lines = (tmp_path / "m.jsonl").read_text().splitlines()[:1]
    (tmp_path / "m.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "b2run"
    assert (
        run(
            [
                "bench",
                "run",
                str(tmp_path / "m.jsonl"),
                "--method",
                "b2",
                "--samples",
                "3",
                "--model",
                "scripted:auto",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    report = Report.model_validate_json(next((out / "reports").iterdir()).read_text())
    assert report.assessment.mode == "baseline" and report.manifest.calls == {"specialist": 3}
    # a baseline report says how it was made: its prompt (with hash) and its settings
    assert [p.id for p in report.manifest.prompts] == ["baseline_b1"]
    assert report.manifest.prompts[0].hash.startswith("sha256:")
    settings = report.manifest.settings
    assert settings["method"] == "b2" and settings["samples"] == 3 and settings["window_s"] == 4.0


def test_each_clip_is_decoded_once_whatever_the_clips_in_flight(small_manifest, tmp_path):
    import gaze.video.store as store

    decodes: list[str] = []
    real = store.DecodeJob

    class Counting(real):
        def __init__(self, request, *rest):
            decodes.append(request.path)
            super().__init__(request, *rest)

    lines = small_manifest.read_text().splitlines()[:3]
    manifest = tmp_path / "three.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    store.DecodeJob = Counting
    try:
        summary = asyncio.run(
            run_benchmark(
                manifest,
                "robogaze",
                tmp_path / "run",
                GazeContext(use_cache=False),
                clip_concurrency=3,
                backbones={"default": ScriptedBackbone(fallback_minimal=True)},
            )
        )
    finally:
        store.DecodeJob = real
    assert len(summary.done) == 3
    assert sorted(decodes) == sorted(set(decodes)) and len(decodes) == 3


def test_screening_metrics():
    def row(clip, condition, severe=False, usable=None):
        events = [
            Event(
                dimension="physical_plausibility",
                type="object_floating",
                start_s=0,
                end_s=1,
                severity=5 if severe else 2,
            )
        ]
        meta = {} if usable is None else {"usable": usable}
        return ManifestClip(
            clip_id=clip,
            video=f"{clip}.mp4",
            instruction="x",
            condition_id=condition,
            events=events,
            metadata=meta,
        )

    rows = [
        row("a1", "A", severe=True),
        row("a2", "A"),
        row("b1", "B", usable=False),
        row("b2", "B", severe=True),
        row("b3", "B"),
    ]
    bad = [
        Event(
            dimension="visual_quality", type="blur", start_s=0, end_s=1, severity=3, confidence=1.0
        )
    ]
    preds = {"a1": bad, "b2": bad, "b1": [], "b3": bad * 2}
    result = screen(rows, preds)
    # A keeps a2 (usable); B keeps b1 (labelled unusable) and b2 (severe)
    assert [c["kept"] for c in result["conditions"]] == [["a2"], ["b1", "b2"]]
    assert result["p_at_50"] == pytest.approx(1 / 3)
    assert result["bad_at_50"] == pytest.approx(1 / 3)
    assert result["pick1"] == pytest.approx(1 / 2)


def test_minimal_instance_is_valid_for_baseline_schema():
    from gaze.bench.baselines import Findings
    from gaze.models.structured import strict_schema

    assert Findings.model_validate(minimal_instance(strict_schema(Findings))).failures == []


def test_running_cost_from_token_prices(small_manifest, tmp_path, capsys):
    lines = small_manifest.read_text().splitlines()[:1]
    manifest = tmp_path / "one.jsonl"
    manifest.write_text(lines[0] + "\n")
    out = tmp_path / "priced"
    assert (
        run(
            [
                "bench",
                "run",
                str(manifest),
                "--model",
                "scripted:auto",
                "--out",
                str(out),
                "--usd-per-mtok-in",
                "2.5",
                "--usd-per-mtok-out",
                "10",
            ]
        )
        == 0
    )
    report = Report.model_validate_json(next((out / "reports").iterdir()).read_text())
    m = report.manifest
    assert m.cost_usd == pytest.approx(
        (m.input_tokens * 2.5 + m.output_tokens * 10) / 1e6, abs=1e-6
    )
    assert m.cost_usd > 0
    assert json.loads((out / "run.json").read_text())["cost_usd"] == pytest.approx(m.cost_usd)
    assert "$" in capsys.readouterr().err


def test_pixel_method_runs_without_a_model_and_scores_by_type(forge_dir, tmp_path, capsys):
    """`bench run --method pixel` needs no model; `bench score --judge type` then credits each
    injection the detector names with the right type, whatever its wording."""
    rows = [json.loads(line) for line in (forge_dir / "manifest.jsonl").read_text().splitlines()]
    for r in rows:
        r["video"] = str(forge_dir / r["video"])
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "pixelrun"
    assert run(["bench", "run", str(manifest), "--method", "pixel", "--out", str(out)]) == 0
    reports = sorted((out / "reports").iterdir())
    assert len(reports) == len(rows)
    report = Report.model_validate_json(reports[0].read_text())
    assert report.assessment.mode == "pixel_evidence" and report.manifest.calls == {}
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["settings"]["method"] == "pixel" and "model" not in run_json["settings"]
    metrics = {}
    for judge in ("lexical", "type"):
        target = tmp_path / f"{judge}.json"
        args = ["bench", "score", str(manifest), str(out / "reports"), "--judge", judge]
        assert run([*args, "--out", str(target), "--bootstrap", "0"]) == 0
        metrics[judge] = json.loads(target.read_text())
    # every injection of the forge is found with the right type and a matching span
    assert metrics["type"]["recall"] == pytest.approx(1.0)
    assert metrics["type"]["n_event_clips"] == sum(bool(r["events"]) for r in rows)
    # the lexical judge only measures how alike the two wordings are
    assert metrics["lexical"]["description_f1"] < 0.5 < metrics["type"]["description_f1"]
    # the run folder itself is read as its reports (not its run.json)
    whole = tmp_path / "whole.json"
    args = ["bench", "score", str(manifest), str(out), "--judge", "type", "--bootstrap", "0"]
    assert run([*args, "--out", str(whole)]) == 0
    assert json.loads(whole.read_text())["recall"] == metrics["type"]["recall"]


def test_other_methods_still_need_a_model(small_manifest, tmp_path, capsys):
    code = run(["bench", "run", str(small_manifest), "--method", "cot", "--out", str(tmp_path)])
    assert code == 2
    assert "needs a model" in one_line_error(capsys.readouterr().err)


def test_only_skip_and_limit_choose_the_clips_and_run_json_records_them(forge_dir, tmp_path):
    """`bench run --only/--skip/--limit`: globs on clip ids, then a count, recorded in run.json;
    a filter that leaves nothing is one line (exit 2)."""
    from gaze.cli.main import run

    manifest = str(forge_dir / "manifest.jsonl")
    out = tmp_path / "run"
    args = ["bench", "run", manifest, "--method", "pixel", "--out", str(out)]
    assert run([*args, "--only", "*_clean", "--only", "*_teleportation", "--skip", "*clean"]) == 0
    info = json.loads((out / "run.json").read_text())
    assert info["clips"] == 1 and info["selection"]["chosen"] == 1
    assert info["selection"]["only"] == ["*_clean", "*_teleportation"]
    assert [p.stem.rsplit("_", 1)[-1] for p in (out / "reports").glob("*.json")] == [
        "teleportation"
    ]
    limited = tmp_path / "limited"
    assert run(["bench", "run", manifest, "--method", "pixel", "--out", str(limited),
                "--limit", "2"]) == 0  # fmt: skip
    assert len(list((limited / "reports").glob("*.json"))) == 2
    assert run([*args, "--only", "no_such_clip"]) == 2


def test_an_interrupted_run_still_writes_run_json(forge_dir, tmp_path):
    """Ctrl-C during `bench run` (SIGINT to the command, as a terminal sends it): the reports
    written so far stay, and run.json records them and that the run was interrupted; a resume
    then redoes only the rest."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    args = [
        sys.executable,
        "-m",
        "gaze",
        "bench",
        "run",
        str(forge_dir / "manifest.jsonl"),
        "--method",
        "pixel",
        "--out",
        str(out),
        "--clips",
        "1",
    ]  # fmt: skip  (the old name of --clips-in-flight)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list((out / "reports").glob("*.json")):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    info = json.loads((out / "run.json").read_text())
    written = len(list((out / "reports").glob("*.json")))
    assert info["interrupted"] is True and 1 <= info["done"] == written < info["clips"]
    resumed = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads((out / "run.json").read_text())
    assert "interrupted" not in again and again["resumed"] == written


def test_each_baseline_records_the_settings_it_uses_and_no_other():
    ctx = GazeContext(model="openai:m", critic_threshold=0.6, top_k=2, concurrency=4)
    b1 = baseline_settings("b1", ctx, samples=5).record()
    b2 = baseline_settings("b2", ctx, samples=5).record()
    b3 = baseline_settings("b3", ctx, samples=5).record()
    assert b1["model"] == "openai:m" and b1["temperature"] == 0.0
    assert b1["max_frames"] == 64  # a base segment's frames, as before long clips' segments grew
    fewer = baseline_settings("b1", GazeContext(model="openai:m", max_frames_per_call=32), 5)
    assert fewer.record()["max_frames"] == 32  # the graph's calls' frame limit, when lower
    assert "samples" not in b1 and "verify_threshold" not in b1
    assert b2["samples"] == 5 and b2["temperature"] == 0.7  # what its samples were sent at
    assert b3["verify_threshold"] == 0.6 and "samples" not in b3
    # the graph's own settings (router, limits) are not what a baseline computes with
    assert not {"top_k", "concurrency", "use_router"} & (b1.keys() | b2.keys() | b3.keys())
