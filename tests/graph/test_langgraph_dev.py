"""`langgraph dev` (the in-memory LangGraph server behind Studio) loads langgraph.json and runs a
thread through its local API with the scripted backbone. Skipped when langgraph-cli[inmem] is
not installed."""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO

pytest.importorskip("langgraph_api", reason="langgraph-cli[inmem] is not installed")
pytest.importorskip("langgraph_cli", reason="langgraph-cli[inmem] is not installed")

from tests.devserver import call  # noqa: E402


def test_dev_server_runs_the_diagnose_graph_with_a_scripted_backbone(dev_server, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "router": [
                    {
                        "scores": [
                            {"dimension": "visual_quality", "relevance": 1.0, "reason": "blurry"}
                        ]
                    }
                ],
                "specialist": [
                    {
                        "hypotheses": [
                            {
                                "type": "blur",
                                "start_s": 1.0,
                                "end_s": 2.0,
                                "explanation": "soft frames",
                                "evidence": ["t=1.00s"],
                                "objects": [],
                                "severity": 2,
                                "confidence": 0.8,
                            }
                        ]
                    }
                ],
                "critic": [
                    {
                        "verdicts": [
                            {
                                "index": 0,
                                "decision": "accept",
                                "reason": "visible",
                                "confidence": 0.7,
                            },
                            # the demo's two pixel-evidence hypotheses, ruled on too
                            *(
                                {
                                    "index": i,
                                    "decision": "reject",
                                    "reason": "no",
                                    "confidence": 0.9,
                                }
                                for i in (1, 2)
                            ),
                        ]
                    }
                ],
            }
        )
    )

    def run_on_a_new_thread() -> tuple[str, dict]:
        thread = call(dev_server + "/threads", {})["thread_id"]
        result = call(
            f"{dev_server}/threads/{thread}/runs/wait",
            {
                "assistant_id": "diagnose",
                "input": {
                    "video": str(REPO / "gaze" / "assets" / "demo.mp4"),
                    "instruction": "put the orange block on the plate",
                },
                # the README's context: a model name, the response cache on (its default)
                "context": {"model": f"scripted:{script}", "top_k": 1},
            },
        )
        return thread, result

    thread_id, result = run_on_a_new_thread()
    assert "report" in result, f"the run failed: {str(result)[:2000]}"
    report = result["report"]
    assert [(e["type"], e["start_s"], e["end_s"]) for e in report["events"]] == [("blur", 1.0, 2.0)]
    assert report["manifest"]["calls"]["specialist"] == 1
    assert report["manifest"]["settings"]["top_k"] == 1
    # the server's checkpointer kept every step, so Studio can step through the run
    history = call(f"{dev_server}/threads/{thread_id}/history", {"limit": 50})
    steps = {task["name"] for state in history for task in state.get("tasks", [])}
    # (a node behind a join edge - observe, align, route, report - is not listed as a pending
    # task by the API)
    assert {
        "load_clip",
        "pixels",
        "ground_task",
        "ground_scene",
        "specialist",
        "critic",
        "pa_ia",
        "progress",
    } <= steps
    assert max(state["metadata"]["step"] for state in history) >= 6
    # the same run again on a fresh thread is answered from the cache
    _, again = run_on_a_new_thread()
    assert again["report"]["manifest"]["cache_hits"] > 0
    assert again["report"]["manifest"]["calls"] == {}
    assert again["report"]["events"] == report["events"]


def test_dev_server_publishes_input_output_and_context_schemas(dev_server):
    (assistant,) = call(dev_server + "/assistants/search", {"graph_id": "diagnose"})
    schemas = call(f"{dev_server}/assistants/{assistant['assistant_id']}/schemas")
    assert schemas["input_schema"]["required"] == ["video", "instruction"]
    video = schemas["input_schema"]["properties"]["video"]
    assert video["description"].startswith("Path of the clip")
    # the output is the report's schema, not {"type": "object"}: Studio can show its fields
    report = schemas["output_schema"]["properties"]["report"]
    assert {"clip_id", "events", "assessment", "manifest"} <= set(report["properties"])
    event = report["properties"]["events"]["items"]
    assert {"type", "start_s", "end_s", "severity"} <= set(event["properties"])
    context = schemas["context_schema"]["properties"]
    assert context["top_k"]["default"] == 3
    assert "Dimensions the router keeps" in context["top_k"]["description"]


def test_dev_server_with_studios_default_context_gives_the_pixel_default(dev_server):
    """Studio's default context names no model: the run reports what pixels show, as `gaze
    diagnose` does without one, instead of failing on 'no model configured'."""
    from gaze.pixels.diagnosis import diagnose_pixels
    from gaze.schema.inputs import clip_input

    video, instruction = str(REPO / "gaze" / "assets" / "demo.mp4"), "put the orange block"

    def run(context: dict) -> dict:
        thread = call(dev_server + "/threads", {})["thread_id"]
        body = {"assistant_id": "diagnose", "input": {"video": video, "instruction": instruction}}
        return call(f"{dev_server}/threads/{thread}/runs/wait", {**body, **context})

    result = run({})
    assert "report" in result, f"the run failed: {str(result)[:2000]}"
    report = result["report"]
    assert report["assessment"]["mode"] == "pixel_evidence"
    assert "pixel_evidence_only" in report["flags"]
    here = diagnose_pixels(clip_input(video, instruction))
    spans = [(e["type"], e["start_s"], e["end_s"]) for e in report["events"]]
    assert spans == [(e.type, e.start_s, e.end_s) for e in here.events]
    assert ("object_teleportation", 4.5, 4.6) in spans
    # a branch that needs a model says so
    failed = run({"context": {"sections": ["diagnosis", "pa_ia"]}})
    assert "report" not in failed
    assert "sections ['pa_ia'] need a model" in json.dumps(failed)
