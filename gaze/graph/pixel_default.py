"""A graph run with no model: the pixel-evidence report that ``gaze diagnose`` writes without
one (DESIGN section 11: no model configured, ``diagnose`` runs the pixel-evidence default and says
so). LangGraph Studio's default context names no model; without this every such run ended in
"no model configured"."""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from gaze.graph.services import opened_by_caller
from gaze.graph.state import InputState
from gaze.pixels.diagnosis import diagnose_pixels
from gaze.schema.inputs import clip_input
from gaze.settings.context import GazeContext, check_pixel_default, has_model

MODEL_ENTRY = ["load_clip", "ground_task", "ground_scene"]
"""Where a run with a model starts: decoding and grounding at once (both memories from one
call)."""
PIXEL_ENTRY = "pixel_default"


def entry(state: InputState, runtime: Runtime[GazeContext]) -> list[str]:
    """START's edges: the diagnosis graph when the run has a model, else the pixel default."""
    if has_model(runtime.context, opened_by_caller(runtime)):
        return MODEL_ENTRY
    return [PIXEL_ENTRY]


async def pixel_default(state: InputState, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    """The pixel-evidence report of the clip (decoding and measuring in a worker thread)."""
    check_pixel_default(runtime.context)
    request = clip_input(
        state["video"], state["instruction"], state.get("initial_frame"), state.get("clip_id")
    )
    report = await asyncio.to_thread(diagnose_pixels, request)
    return {"report": report.model_dump(mode="json")}
