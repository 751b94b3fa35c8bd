"""Segments as long as the served model takes.

When the start-up check finds that a server takes fewer images per request than the run's
layout sends (vLLM's ``--limit-mm-per-prompt``, or a context length too short for them), a run
that ``gaze.diagnose`` prepares shortens its segments to fit instead of failing: every sampled
frame is still seen by the observers, specialists and critic, in more calls of fewer windows
each. The layout used is what the report's settings record, with the number it was fitted to
(``RunManifest.served_images``). ``gaze.diagnose`` fits the layout before the graph runs; a
graph run nobody prepared (LangGraph Studio) fits it in its ``observe`` node
(``RunServices.settings``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from gaze.models.caller import Caller
from gaze.settings.caller import most_images
from gaze.settings.context import GazeContext

SEGMENT_ROLES = ("observer", "specialist", "critic")
"""The roles whose requests carry a segment's frames: the ones a shorter segment makes smaller."""


def fit_layout(ctx: GazeContext, most: int) -> GazeContext | None:
    """The context whose requests carry at most ``most`` images (pure): ``ctx`` itself when its
    requests already do; else segments of as many windows as fit, at the same frames per window
    (a long clip's segments grow no further: ``gaze.settings.segment_length``); None when
    nothing fits (one window's frames, or the judges', are more than ``most``)."""
    if most_images(ctx) <= most:
        return ctx
    per_window = 1 if ctx.grid else ctx.frames_per_window
    frames = min(ctx.max_frames_per_call, most) // per_window * per_window  # whole windows
    windows = min(ctx.max_segment_windows, frames // per_window)
    if windows < 1:
        return None
    fitted = dataclasses.replace(ctx, max_segment_windows=windows, max_frames_per_call=frames)
    return fitted if most_images(fitted) <= most else None


async def served_layout(
    caller: Caller, ctx: GazeContext, first_call: asyncio.Future[Any] | None
) -> tuple[GazeContext, int | None]:
    """The run's context fitted to what its servers take, and the number of images it was
    fitted to (None: the context is kept). What a server takes is known from the caller's
    finished checks or the cache's memory of an earlier run; else from the start-up checks,
    once ``first_call`` (the grounding call, which the observers wait for anyway) has shown
    that the run talks to a server at all: a run answered from the cache keeps its settings."""
    most = await caller.images_served(SEGMENT_ROLES, check=False)
    if most is None:
        if first_call is not None:
            await asyncio.wait([first_call])  # its outcome is the grounding node's to report
        if first_call is None or caller.checks_started:
            most = await caller.images_served(SEGMENT_ROLES, check=True)
    fitted = fit_layout(ctx, most) if most is not None else None
    if fitted is None or fitted is ctx:
        return ctx, None
    return fitted, most
