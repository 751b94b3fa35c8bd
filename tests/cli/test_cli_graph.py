"""`gaze diagnose --model ...`: the full graph from the command line, including the real openai
SDK talking HTTP to a stand-in server."""

from __future__ import annotations

import json

import pytest

from gaze.cli.main import run
from gaze.schema.report import Report
from tests.fresh import python_output
from tests.standin import StandIn, clip_work, minimal_chat, schema_name


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    for name in ("GAZE_MODEL", "GAZE_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GAZE_CACHE_DIR", str(tmp_path / "cache"))


def test_scripted_file_model_runs_the_graph(forge_dir, forge_rows, tmp_path, capsys):
    row = forge_rows["blur"]
    truth = row.events[0]
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "router": [
                    {"scores": [{"dimension": "visual_quality", "relevance": 1, "reason": "soft"}]}
                    for _ in range(4)
                ],
                "specialist": [
                    {  # one call per segment: a part per routed dimension (unscored ones too)
                        "visual_quality": {
                            "hypotheses": [
                                {
                                    "type": "blur",
                                    "start_s": truth.start_s,
                                    "end_s": truth.end_s,
                                    "severity": 2,
                                    "explanation": "frames go soft",
                                    "evidence": ["sharpness drops"],
                                    "objects": [],
                                    "confidence": 0.9,
                                }
                            ]
                        },
                        "task_progress": {"hypotheses": []},
                        "instruction_consistency": {"hypotheses": []},
                    }
                ],
                "critic": [
                    {
                        "verdicts": [
                            {
                                "index": 0,
                                "decision": "accept",
                                "reason": "soft frames",
                                "confidence": 0.8,
                            }
                        ]
                    }
                ],
            }
        )
    )
    code = run(
        [
            "diagnose",
            str(forge_dir / row.video),
            "-i",
            row.instruction,
            "--model",
            f"scripted:{script}",
            "--sections",
            "diagnosis,signals",
            "--json",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = Report.model_validate_json(captured.out)
    assert report.assessment.mode == "graph"
    assert [(e.type, e.start_s, e.end_s) for e in report.events] == [
        ("blur", truth.start_s, truth.end_s)
    ]
    assert report.signals is not None and report.signals.thresholds["BLUR_RATIO"] == 0.3
    assert "Traceback" not in captured.err


def test_openai_provider_end_to_end_over_http(forge_dir, forge_rows, capsys):
    row = forge_rows["clean"]
    with StandIn(responder=minimal_chat) as server:
        code = run(
            [
                "diagnose",
                str(forge_dir / row.video),
                "-i",
                row.instruction,
                "--model",
                "openai:vision-test",
                "--base-url",
                server.url + "/v1",
                "--json",
            ]
        )
        captured = capsys.readouterr()
        assert code == 0, captured.err
        report = Report.model_validate_json(captured.out)
        names = [schema_name(seen) for seen in server.seen]
        bodies = [seen.body for seen in clip_work(server.seen)]
    assert report.events == [] and report.flags == []
    assert names.count("Probe") == 2  # the start-up checks: one image, and 32
    # only the grounding call goes out while they run: the observers wait for it
    last_probe = max(i for i, name in enumerate(names) if name == "Probe")
    assert last_probe < names.index("WindowObservations")
    assert {"Grounding", "WindowObservations", "RouterOutput"} <= set(names)
    assert all(b["model"] == "vision-test" and b["temperature"] == 0.0 for b in bodies)
    assert report.manifest.models["observer"] == "openai:vision-test"
    assert report.manifest.input_tokens == 11 * len(bodies)  # the stand-in's usage


def test_rendered_graph_report_shows_events(forge_dir, forge_rows, tmp_path, capsys):
    row = forge_rows["blur"]
    truth = row.events[0]
    script = tmp_path / "script.json"
    hypothesis = {
        "type": "blur",
        "start_s": truth.start_s,
        "end_s": truth.end_s,
        "severity": 2,
        "explanation": "the frames go soft around the gripper",
        "evidence": ["sharpness drops"],
        "objects": [],
        "confidence": 0.9,
    }
    verdicts = [
        {"index": i, "decision": "accept", "reason": "soft", "confidence": 0.8} for i in range(2)
    ]
    script.write_text(
        json.dumps(
            {
                "router": [
                    {"scores": [{"dimension": "visual_quality", "relevance": 1, "reason": "r"}]}
                ]
                * 4,
                "specialist": [
                    {
                        "visual_quality": {"hypotheses": [hypothesis]},
                        "task_progress": {"hypotheses": []},
                        "instruction_consistency": {"hypotheses": []},
                    }
                ],
                "critic": [{"verdicts": verdicts}] * 4,
            }
        )
    )
    args = ["diagnose", str(forge_dir / row.video), "-i", row.instruction]
    code = run([*args, "--model", f"scripted:{script}"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    out = " ".join(captured.out.split())
    assert "No failure events found" not in out
    assert "blur" in out and "the frames go soft" in out  # (cells wrap at 80 columns)
    assert f"{truth.start_s:.2f}" in out


def test_credentials_in_a_base_url_never_reach_the_report(forge_dir, forge_rows, capsys):
    row = forge_rows["clean"]
    with StandIn(responder=minimal_chat) as server:
        secret_url = server.url.replace("http://", "http://user:s3cret-token@") + "/v1?key=k3y"
        code = run(
            [
                "diagnose",
                str(forge_dir / row.video),
                "-i",
                row.instruction,
                "--model",
                "openai:m",
                "--base-url",
                secret_url,
                "--json",
            ]
        )
        captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "s3cret-token" not in captured.out + captured.err
    assert "k3y" not in captured.out + captured.err
    assert Report.model_validate_json(captured.out).manifest.settings["base_url"] == (
        server.url + "/v1"
    )


def test_the_command_loads_rich_and_the_input_model_once_its_first_request_has_left(tmp_path):
    """Rich (the progress line, the rendered report) and the first model that reads its field
    docstrings (``ClipInput``) load after the first request: on 2 cores they delayed it by
    0.03-0.05 s and 0.02 s. The line still appears, and the report is rendered. A fresh
    interpreter, as ``gaze diagnose`` runs (with the environment this file's fixture sets)."""
    from pathlib import Path

    from gaze.bench.forge import forge_clip

    clip = tmp_path / "clip.mp4"
    forge_clip(clip, seed=1, failures=[], duration_s=4.0)
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from gaze.cli.main import run
from gaze.models.providers.openai_chat import OpenAIChat
from tests.standin import StandIn, minimal_chat

loaded_at_requests = []
complete = OpenAIChat.complete

async def watched(self, request):
    loaded_at_requests.append(
        "rich" in sys.modules or "gaze.schema.inputs" in sys.modules
    )
    return await complete(self, request)

OpenAIChat.complete = watched
with StandIn(responder=minimal_chat) as server:
    code = run(["diagnose", {str(clip)!r}, "-i", "put the block on the plate", "--model",
                "openai:m", "--base-url", server.url + "/v1", "--no-cache"])
print("RESULT", code, loaded_at_requests[0], all(loaded_at_requests[-3:]))
"""
    output = python_output(script)
    assert output.split()[-4:] == ["RESULT", "0", "False", "True"]
    assert "Failure events" in output or "no failure" in output.lower()
