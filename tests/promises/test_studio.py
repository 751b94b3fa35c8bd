"""README "LangGraph Studio": the server as the README starts it, runs as Studio makes them."""

from __future__ import annotations

import pytest

from tests.devserver import REPO, call

pytest.importorskip("langgraph_api", reason="langgraph-cli[inmem] is not installed")

DEMO = str(REPO / "gaze" / "assets" / "demo.mp4")


def test_runs_on_one_thread_each_start_from_an_empty_clip_state(dev_server):
    """Studio reuses a thread for run after run: each run's clip state starts empty (the
    second run used to send the router and specialists the first run's observations as well,
    and its report counted both runs' calls); the thread keeps its history."""
    thread = call(dev_server + "/threads", {})["thread_id"]
    body = {
        "assistant_id": "diagnose",
        "input": {"video": DEMO, "instruction": "put the orange block on the plate"},
        "context": {"model": "scripted:auto", "use_cache": False},
    }
    reports = []
    for _ in range(3):
        result = call(f"{dev_server}/threads/{thread}/runs/wait", body)
        assert "report" in result, f"the run failed: {str(result)[:2000]}"
        reports.append(result["report"])
        state = call(f"{dev_server}/threads/{thread}/state")["values"]
        assert len(state["observations"]) == len(state["windows"]) == 2
        assert len(state["usage"]) == sum(reports[-1]["manifest"]["calls"].values())
    calls = [r["manifest"]["calls"] for r in reports]
    assert calls[0]["grounding"] == 1 and calls[0]["observer"] == 1  # the demo's 2 windows
    assert calls[0] == calls[1] == calls[2]
    assert [r["events"] for r in reports[1:]] == [reports[0]["events"]] * 2
    history = call(f"{dev_server}/threads/{thread}/history", {"limit": 200})
    assert len({s["metadata"].get("run_id") for s in history}) >= 3  # every run kept


def test_a_pixel_run_after_a_model_run_on_one_thread_reports_only_pixels(dev_server):
    thread = call(dev_server + "/threads", {})["thread_id"]
    body = {
        "assistant_id": "diagnose",
        "input": {"video": DEMO, "instruction": "put the orange block on the plate"},
    }
    model_run = {**body, "context": {"model": "scripted:auto", "use_cache": False}}
    first = call(f"{dev_server}/threads/{thread}/runs/wait", model_run)
    assert first["report"]["assessment"]["mode"] != "pixel_evidence"
    second = call(f"{dev_server}/threads/{thread}/runs/wait", body)
    assert second["report"]["assessment"]["mode"] == "pixel_evidence"
    state = call(f"{dev_server}/threads/{thread}/state")["values"]
    assert not state.get("observations") and not state.get("usage")


def test_a_studio_user_reviews_the_events_before_the_report(dev_server):
    """Context ``review``: the run pauses on the thread with the events; resuming it with the
    person's decisions gives the report with them."""
    thread = call(dev_server + "/threads", {})["thread_id"]
    body = {
        "assistant_id": "diagnose",
        "input": {"video": DEMO, "instruction": "put the orange block on the plate"},
        "context": {"model": "scripted:auto", "use_cache": False, "review": True},
    }
    paused = call(f"{dev_server}/threads/{thread}/runs/wait", body)
    assert "report" not in paused, str(paused)[:2000]
    shown = paused["__interrupt__"][0]["value"]["events"]
    assert len(shown) == 2
    answer = {"decisions": [{"index": 0, "decision": "reject", "reason": "duplicate"}]}
    resumed = {**body, "command": {"resume": answer}}
    del resumed["input"]
    report = call(f"{dev_server}/threads/{thread}/runs/wait", resumed)["report"]
    assert len(report["events"]) == 1 and report["events"][0]["type"] == shown[1]["type"]
    assert any(r["reason"] == "rejected in review: duplicate" for r in report["rejected"])
