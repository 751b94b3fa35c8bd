"""The observers: one call per group of windows a segment examines (four by default, more in a
long clip: ``gaze.settings.segment_length``), each
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
from gaze.models.settle import all_settled
from gaze.settings.context import GazeContext
from gaze.settings.segment_length import segment_windows
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


def group_size(ctx: GazeContext, windows: int) -> int:
    """Windows one observer call sees in a clip of ``windows`` windows: the windows a segment
    examines (``gaze.settings.segment_length``) when observers see segments
    (``GazeContext.segment_observers``), else one."""
    return segment_windows(ctx, windows) if ctx.segment_observers else 1


def same_group(last: Window, window: Window, size: int) -> bool:
    """Whether ``window`` joins the group ``last`` is in: the next window, same group."""
    return window.index == last.index + 1 and window.index // size == last.index // size


def calls_for(run: Sequence[Window], ctx: GazeContext) -> list[tuple[Window, ...]]:
    """The observer calls for consecutive windows of one group: one call for them all when
    there are several and their images fit one call, else one call each. The segment of such a
    group sends the same frames in the same order, a prefix a server's cache holds already."""
    images = sum(w.images(ctx.grid) for w in run)
    if len(run) > 1 and images <= ctx.max_frames_per_call:
        return [tuple(run)]
    return [(w,) for w in run]


def observer_groups(windows: Sequence[Window], ctx: GazeContext) -> list[tuple[Window, ...]]:
    """The windows each observer call sees, in time order (pure): windows group by their index
    over ``group_size`` (so groups start where ``gaze.graph.segments.split_span`` starts
    segments), consecutive ones together (``calls_for``)."""
    size = group_size(ctx, len(windows))
    runs: list[list[Window]] = []
    for window in windows:
        last = runs[-1][-1] if runs else None
        if last is not None and same_group(last, window, size):
            runs[-1].append(window)
        else:
            runs.append([window])
    return [call for run in runs for call in calls_for(run, ctx)]


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
                svc.caller,
                instruction,
                refs,
                frames,
                known,
                ctx.max_retries,
                ctx.video_windows(),
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

    def start_all(run: list[Window]) -> None:
        for group in calls_for(run, ctx):
            start(group)

    try:
        size = 0  # from the first window's count of the clip's windows, as its container says
        held: list[Window] = []  # the windows of a group still waiting for the rest of it
        async for window in svc.clips.windows(video):
            size = size or group_size(ctx, window.planned)
            if held and not same_group(held[-1], window, size):
                start_all(held)
                held = []
            held.append(window)
            if window.index % size == size - 1:
                start_all(held)
                held = []
        start_all(held)  # the clip's last windows, before its decoded clip
        clip = await svc.clips.decoded(video)
        kept = []
        for group in observer_groups(clip.windows, ctx):
            started, call = calls.get(tuple(w.index for w in group), ((), None))
            if call is None or started != group:  # not handed over, or handed over otherwise
                call = start(group)
            kept.append(call)
        done = await all_settled(*kept)
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
