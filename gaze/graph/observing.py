"""The observers: one call per pair of windows (the pair a two-window segment examines), each
started as soon as its windows' frames are encoded and the task memory exists -- not when the
whole clip is decoded.

``gaze.diagnose`` starts this work before the graph module has loaded (``gaze.graph.early``);
the ``observe`` node collects it, or does it itself in a run nobody prepared (Studio).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
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


def pairing(ctx: GazeContext) -> bool:
    """Whether observers see windows in pairs: asked for, and segments are pairs of windows
    (``GazeContext.observer_pairs``)."""
    return ctx.observer_pairs and ctx.max_segment_windows == 2


def pairable(first: Window | None, second: Window | None, ctx: GazeContext) -> bool:
    """Whether one observer call sees ``first`` and ``second`` together: an even window and
    the next one, when observers see pairs and both fit one call. A segment of that pair sends
    the same frames in the same order, so they are a prefix it shares with this call."""
    if first is None or second is None or not pairing(ctx):
        return False
    if first.index % 2 or second.index != first.index + 1:
        return False
    return first.images(ctx.grid) + second.images(ctx.grid) <= ctx.max_frames_per_call


def observer_groups(windows: Sequence[Window], ctx: GazeContext) -> list[tuple[Window, ...]]:
    """The windows each observer call sees, in time order (pure): pairs where ``pairable``,
    the others alone."""
    by_index = {w.index: w for w in windows}
    groups: list[tuple[Window, ...]] = []
    for window in windows:
        if pairable(by_index.get(window.index - 1), window, ctx):
            continue  # seen with the window before it
        after = by_index.get(window.index + 1)
        if after is not None and pairable(window, after, ctx):
            groups.append((window, after))
        else:
            groups.append((window,))
    return groups


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

    async def one(group: tuple[Window, ...]) -> dict[str, Any]:
        refs = [window_ref(w) for w in group]
        known = await asyncio.shield(memory)
        count = sum(w.images(ctx.grid) for w in group)
        async with svc.frames_gate.hold(count):  # frames are read only when they may go out
            frames = [f for w in group for f in svc.clips.frames(video, w)]
            result = await observer.observe_windows(
                svc.caller, instruction, refs, frames, known, ctx.max_retries
            )
        observations = []
        for k, ref in enumerate(refs):
            svc.observed(ref["index"])
            observation = empty_observation(ref)
            if result.value is not None:
                observation.update(result.value.windows[k].model_dump())
            observations.append(observation)
        wheres = [f"window {ref['index']}" for ref in refs]
        return {
            "observations": observations,
            "usage": result.records,
            "failures": failure("observer", result, " and ".join(wheres)),
            "not_assessed": [] if result.value is not None else wheres,
        }

    # by the windows' indices: the windows each call was started with, and the call
    calls: dict[tuple[int, ...], tuple[tuple[Window, ...], asyncio.Future[dict[str, Any]]]] = {}

    def start(group: tuple[Window, ...]) -> asyncio.Future[dict[str, Any]]:
        key = tuple(w.index for w in group)
        if key in calls:
            calls[key][1].cancel()
        call = asyncio.ensure_future(one(group))
        calls[key] = (group, call)
        return call

    try:
        held: dict[int, Window] = {}  # even windows waiting for the next one
        async for window in svc.clips.windows(video):
            first = held.pop(window.index - 1, None)
            if first is not None and pairable(first, window, ctx):
                start((first, window))
                continue
            if first is not None:
                start((first,))
            if pairing(ctx) and window.index % 2 == 0:
                held[window.index] = window
            else:
                start((window,))
        clip = await svc.clips.decoded(video)
        kept = []
        for group in observer_groups(clip.windows, ctx):
            started, call = calls.get(tuple(w.index for w in group), ((), None))
            if call is None or started != group:  # not handed over, or handed over otherwise
                call = start(group)
            kept.append(call)
        done = await asyncio.gather(*kept)
    finally:
        for _, call in calls.values():
            call.cancel()
        memory.cancel()
    return {
        "observations": [o for d in done for o in d["observations"]],
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
