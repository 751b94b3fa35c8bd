"""README "Pointing gaze at a model" and "Running at scale": what a model run keeps of the
pixel evidence, and that a run records what it sent."""

from __future__ import annotations

import json

from gaze.schema.report import Report
from tests.promises.conftest import gaze_cli
from tests.standin import StandIn, clip_work, minimal_chat

NO_VERDICT = "unverified: the critic gave no verdict"


def test_the_readme_dry_run_keeps_what_pixels_proved(tmp_path):
    """`gaze diagnose --demo --model scripted:auto` (the README's dry run): the scripted critic
    gives no verdicts, so the demo's two pixel events stay events, marked unverified, with their
    boxes, and the report is partial -- it used to say "no failure was visible"."""
    env = {"GAZE_CACHE_DIR": str(tmp_path / "cache")}
    pixels = Report.model_validate_json(gaze_cli("diagnose", "--demo", "--json", env=env).stdout)
    proc = gaze_cli("diagnose", "--demo", "--model", "scripted:auto", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    model = Report.model_validate_json(proc.stdout)
    spans = [(e.type, e.start_s, e.end_s) for e in model.events]
    assert spans == [(e.type, e.start_s, e.end_s) for e in pixels.events] and len(spans) == 2
    assert all(NO_VERDICT in e.evidence and "pixel evidence" in e.evidence for e in model.events)
    assert "partial" in model.flags and not model.rejected
    assert "no failure was visible" not in model.assessment.note
    # pixel boxes survive the graph (its typed event record used to drop them)
    teleport = next(e for e in model.events if e.type == "object_teleportation")
    assert teleport.regions and teleport.regions == pixels.events[1].regions


def test_a_critic_accepting_a_pixel_event_keeps_its_boxes(tmp_path):
    script = tmp_path / "script.json"
    verdict = {"decision": "accept", "reason": "seen in the frames", "confidence": 0.9}
    script.write_text(
        json.dumps({"critic": [{"verdicts": [{"index": i, **verdict} for i in (0, 1)]}]})
    )
    proc = gaze_cli(
        "diagnose", "--demo", "--model", f"scripted:{script}", "--json",
        env={"GAZE_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    assert report.flags == []
    teleport = next(e for e in report.events if e.type == "object_teleportation")
    assert teleport.confidence == 0.9 and {r.label for r in teleport.regions} >= {"before"}


def test_b2_records_the_temperature_its_samples_were_sent_at(forge_dir, tmp_path):
    manifest = tmp_path / "one.jsonl"
    first = (forge_dir / "manifest.jsonl").read_text().splitlines()[0]
    row = json.loads(first)
    row["video"] = str(forge_dir / row["video"])
    manifest.write_text(json.dumps(row) + "\n")
    with StandIn(responder=minimal_chat) as server:
        proc = gaze_cli(
            "bench", "run", str(manifest), "--method", "b2", "--out", str(tmp_path / "run"),
            "--model", "openai:m", "--base-url", server.url + "/v1", "--samples", "3",
            env={"GAZE_CACHE_DIR": str(tmp_path / "cache")},
        )  # fmt: skip
        sent = {s.body["temperature"] for s in clip_work(server.seen)}
    assert proc.returncode == 0, proc.stderr
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["settings"]["temperature"]
    report = Report.model_validate_json(
        next((tmp_path / "run" / "reports").glob("*.json")).read_text()
    )
    assert sent == {0.7} and recorded == 0.7 == report.manifest.settings["temperature"]


def test_b3_verifies_at_the_recorded_critic_threshold(forge_dir, tmp_path):
    """A claim the verifier accepts at confidence 0.6: kept at the default threshold (0.5), not
    at --critic-threshold 0.8 (b3 verified at 0.5 whatever was recorded)."""
    manifest = tmp_path / "one.jsonl"
    row = json.loads((forge_dir / "manifest.jsonl").read_text().splitlines()[0])
    row["video"] = str(forge_dir / row["video"])
    manifest.write_text(json.dumps(row) + "\n")
    claim = {
        "type": "blur", "start_s": 1.0, "end_s": 2.0, "severity": 2, "description": "soft",
        "evidence": ["t=1"], "confidence": 0.9,
    }  # fmt: skip
    script = tmp_path / "b3.json"
    script.write_text(
        json.dumps(
            {
                "specialist": [{"reasoning": "r", "failures": [claim]}] * 2,
                "critic": [
                    {
                        "verdicts": [
                            {"index": 0, "decision": "accept", "reason": "ok", "confidence": 0.6}
                        ]
                    }
                ]
                * 2,
            }
        )
    )
    kept = {}
    for threshold in ("0.5", "0.8"):
        out = tmp_path / f"run{threshold}"
        proc = gaze_cli(
            "bench", "run", str(manifest), "--method", "b3", "--out", str(out),
            "--model", f"scripted:{script}", "--critic-threshold", threshold, "--no-cache",
            env={"GAZE_CACHE_DIR": str(tmp_path / "cache")},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        report = json.loads(next((out / "reports").glob("*.json")).read_text())
        kept[threshold] = [e["type"] for e in report["events"]]
        assert report["manifest"]["settings"]["verify_threshold"] == float(threshold)
    assert kept == {"0.5": ["blur"], "0.8": []}
