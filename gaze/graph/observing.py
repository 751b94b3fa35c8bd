"""The observers: one call per window, each started as soon as its window's frames are encoded
and the task memory exists -- not when the whole clip is decoded.

``gaze.diagnose`` starts this work before the graph module has loaded (``gaze.graph.early``);
the ``observe`` node collects it, or does it itself in a run nobody prepared (Studio).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from gaze.agents import observer
from gaze.graph.services import ObservedWindows, RunServices
from gaze.graph.state import Observation, TaskMemoryRecord, Update, WindowRef, failure
from gaze.settings.context import GazeContext
from gaze.video.windows import Window


def window_ref(window: Window) -> WindowRef:
    return WindowRef(
        index=window.index,
        start_s=window.start_s,
        end_s=window.end_s,
        frames=len(window.frame_indices),
    )


def empty_observation(window: WindowRef) -> Observation:
    """A window's observation record before (or without) the observer's account."""
    return Observation(
        window=window["index"],
        start_s=window["start_s"],
        end_s=window["end_s"],
        summary="",
        subtask_status=[],
        notable=[],
    )


def context_window(
    window: Window, earlier: Mapping[int, Window], ctx: GazeContext
) -> Window | None:
    """The window shown to ``window``'s observer first, as context: for every second window (odd
    index) the one before it, when the pair fits one call and segments are pairs of windows.
    A segment of that pair sends the same frames in the same order, so they are a prefix it
    shares with this call (``GazeContext.observer_context``)."""
    if not ctx.observer_context or window.index % 2 == 0 or ctx.max_segment_windows != 2:
        return None
    before = earlier.get(window.index - 1)
    if before is None:
        return None
    images = 2 if ctx.grid else len(before.frame_indices) + len(window.frame_indices)
    return before if images <= ctx.max_frames_per_call else None  # a grid is one image a window


async def observe_windows(
    svc: RunServices,
    ctx: GazeContext,
    instruction: str,
    video: str,
    task_memory: Awaitable[TaskMemoryRecord | None],
) -> Update:
    """Every window's observation (the ``observe`` node's update), each call started when its
    window is encoded. A window handed over early that differs from the decoded clip's (a
    container whose timestamps contradict its frame count) is observed again as decoded."""
    memory = asyncio.ensure_future(task_memory)

    async def one(window: Window, before: Window | None) -> dict[str, Any]:
        ref = window_ref(window)
        known = await asyncio.shield(memory)
        async with svc.frames_gate:  # frames are read only when the call may go out
            frames = svc.clips.frames(video, window)
            if before is not None:
                frames = svc.clips.frames(video, before) + frames
            result = await observer.observe_window(
                svc.caller,
                instruction,
                ref,
                frames,
                known,
                ctx.max_retries,
                context=None if before is None else window_ref(before),
            )
        svc.observed(window.index)
        observation = empty_observation(ref)
        if result.value is not None:
            observation.update(result.value.model_dump())  # type: ignore[typeddict-item]
        where = f"window {window.index}"
        return {
            "observation": observation,
            "usage": result.records,
            "failures": failure("observer", result, where),
            "not_assessed": [] if result.value is not None else [where],
        }

    calls: dict[int, tuple[Window, Window | None, asyncio.Future[dict[str, Any]]]] = {}
    try:
        handed_over: dict[int, Window] = {}
        async for window in svc.clips.windows(video):
            before = context_window(window, handed_over, ctx)
            handed_over[window.index] = window
            calls[window.index] = (window, before, asyncio.ensure_future(one(window, before)))
        clip = await svc.clips.decoded(video)
        decoded = {w.index: w for w in clip.windows}
        kept = []
        for window in clip.windows:
            before = context_window(window, decoded, ctx)
            handed, shown_before, call = calls.get(window.index, (None, None, None))
            if call is None or handed != window or shown_before != before:
                if call is not None:
                    call.cancel()
                call = asyncio.ensure_future(one(window, before))
                calls[window.index] = (window, before, call)
            kept.append(call)
        done = await asyncio.gather(*kept)
    finally:
        for _, _, call in calls.values():
            call.cancel()
        memory.cancel()
    return {
        "observations": [d["observation"] for d in done],
        "usage": [r for d in done for r in d["usage"]],
        "failures": [f for d in done for f in d["failures"]],
        "not_assessed": [w for d in done for w in d["not_assessed"]],
        "prompts": ["observer"],
    }


async def reporting(
    job: asyncio.Future[Update], observed: ObservedWindows, write: Callable[[int], None]
) -> Update:
    """``job``'s update, writing each observed window as it comes from the caller's own task
    (LangGraph's stream writer works only inside the node, not in work started before it)."""
    reported = 0
    while True:
        for index in observed.done[reported:]:
            write(index)
        reported = len(observed.done)
        if job.done():
            return job.result()
        observed.changed.clear()
        waiter: asyncio.Future[Any] = asyncio.ensure_future(observed.changed.wait())
        try:
            await asyncio.wait({job, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
