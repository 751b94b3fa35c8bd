"""The fan-out edge (a pure function of state): one specialist call per routed segment, covering
the dimensions routed to it, or straight to the critic when nothing was routed."""

from __future__ import annotations

from typing import Literal

from langgraph.types import Send

from gaze.graph.segment_texts import observations_text, pixel_hints_text
from gaze.graph.state import SpecialistTask, State


def to_specialists(state: State) -> list[Send] | Literal["critic"]:
    segments = {s["id"]: s for s in state.get("segments", [])}
    clip_end = float(state["clip"]["duration_s"])
    sends = []
    for route in state.get("routes", []):
        if not route["dimensions"]:
            continue
        segment = segments[route["segment_id"]]
        sends.append(
            Send(
                "specialist",
                SpecialistTask(
                    segment=segment,
                    dimensions=list(route["dimensions"]),
                    video=state["video"],
                    instruction=state["instruction"],
                    clip_end_s=clip_end,
                    task_memory=state.get("task_memory"),
                    scene_memory=state.get("scene_memory"),
                    observations=observations_text(state.get("observations", []), segment),
                    pixel_hints=pixel_hints_text(state.get("pixel_events", []), segment),
                ),
            )
        )
    return sends or "critic"
