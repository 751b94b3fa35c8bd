"""Single nodes through the compiled graph (``graph.nodes[name]``): each writes exactly the fields
its name promises."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph._internal._constants import CONFIG_KEY_RUNTIME  # how Pregel hands nodes a Runtime
from langgraph.runtime import Runtime

from gaze.graph.graph import graph
from gaze.graph.services import close_run
from gaze.settings.context import GazeContext


def run_node(name: str, state: dict[str, Any], **settings: Any) -> dict[str, Any]:
    ctx = GazeContext(model="scripted:auto", use_cache=False, **settings)

    async def go() -> dict[str, Any]:
        runtime = Runtime(context=ctx)
        try:
            return await graph.nodes[name].ainvoke(
                state, config={"configurable": {CONFIG_KEY_RUNTIME: runtime}}
            )
        finally:
            await close_run(f"context:{id(ctx)}")

    return asyncio.run(go())


@pytest.fixture
def teleport(forge_dir, forge_rows):
    row = forge_rows["object_teleportation"]
    return {"video": str(forge_dir / row.video), "instruction": row.instruction}, row.events[0]


WINDOWS = [
    {"index": 0, "start_s": 0.0, "end_s": 4.0, "frames": 16},
    {"index": 1, "start_s": 4.0, "end_s": 8.0, "frames": 16},
]


def test_load_clip_writes_metadata_windows_and_flags(teleport):
    state, _ = teleport
    update = run_node("load_clip", state)
    assert set(update) == {"started_at", "clip", "windows", "decode_flags"}
    assert update["clip"]["duration_s"] == 8.0
    assert update["windows"] == WINDOWS


def test_pixels_writes_the_pixel_events(teleport):
    state, truth = teleport
    update = run_node("pixels", state)
    assert set(update) == {"pixel_events"}
    (event,) = update["pixel_events"]
    assert (event["type"], event["start_s"], event["end_s"]) == (
        "object_teleportation",
        truth.start_s,
        truth.end_s,
    )
    assert run_node("pixels", state, pixel_hints=False) == {"pixel_events": []}


def test_align_writes_segments_only():
    state = {"video": "x", "instruction": "y", "windows": WINDOWS, "observations": []}
    update = run_node("align", state)
    assert update == {
        "segments": [
            {"id": "seg0", "subtask_id": None, "start_s": 0.0, "end_s": 8.0, "windows": [0, 1]}
        ]
    }


def test_route_without_router_sends_every_dimension_and_makes_no_call():
    segment = {"id": "seg0", "subtask_id": None, "start_s": 0.0, "end_s": 8.0, "windows": [0, 1]}
    state = {"video": "x", "instruction": "y", "segments": [segment]}
    (route,) = run_node("route", state, use_router=False)["routes"]
    assert route["segment_id"] == "seg0" and len(route["dimensions"]) == 6


def test_critic_without_verification_keeps_specialist_and_pixel_hypotheses(teleport):
    state, truth = teleport
    segment = {"id": "seg0", "subtask_id": None, "start_s": 0.0, "end_s": 8.0, "windows": [0, 1]}
    pixel = {
        "dimension": "physical_plausibility",
        "type": "object_teleportation",
        "start_s": truth.start_s,
        "end_s": truth.end_s,
        "severity": 4.0,
        "description": "a region jumps",
        "evidence": ["jump"],
        "confidence": 0.8,
        "dimensions": ["physical_plausibility"],
    }
    update = run_node(
        "critic", {**state, "segments": [segment], "pixel_events": [pixel]}, use_critic=False
    )
    (event,) = update["events"]
    assert event["type"] == "object_teleportation" and "pixel evidence" in event["evidence"]
