"""Run-scoped services: the caller (backbones, cache, concurrency, backoff) and the run's clip
store (decoded frames, pixel evidence). One ``RunServices`` object belongs to one graph run.

Who owns it:
- ``gaze.diagnose`` / ``bench run`` open it with ``open_run`` before streaming the graph (with
  that run id in the config) and close it afterwards, whatever happened;
- a run nobody opened (LangGraph Studio, ``graph.ainvoke``) gets services built from its context
  on first use; the report node closes them, and at most ``MAX_ORPHANS`` runs that died before
  their report are kept (the oldest are closed first).
Nothing is stored on the context object and nothing is global but this table of open runs.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gaze.graph.frame_budget import FrameBudget
from gaze.models import defaults
from gaze.models.caller import Caller
from gaze.pixels.measure import PIXEL_PASS
from gaze.settings.caller import build_caller, sampling_of
from gaze.settings.context import GazeContext, wants_pixels
from gaze.settings.segment_length import segment_windows
from gaze.settings.served_layout import served_layout
from gaze.video.store import ClipStore
from gaze.video.windows import SamplingSettings

if TYPE_CHECKING:  # LangGraph is the largest import of a run: not needed to open one
    from langgraph.runtime import Runtime

MAX_ORPHANS = 8


class ObservedWindows:
    """Live progress: which windows have their observation, in the order they got it."""

    def __init__(self) -> None:
        self.done: list[int] = []
        self.changed = asyncio.Event()

    def __call__(self, index: int) -> None:
        if index in self.done:  # a window observed again (decoding saw it otherwise)
            return
        self.done.append(index)
        self.changed.set()


@dataclass
class RunServices:
    caller: Caller
    sampling: SamplingSettings
    clips: ClipStore
    owns_caller: bool = True
    frames_gate: FrameBudget = field(default_factory=lambda: FrameBudget(defaults.FRAMES_IN_FLIGHT))
    """Frames the run's calls hold at once (``gaze.graph.frame_budget``): a long clip's hundreds
    of calls do not all load their images before the request limit lets them go, and its memory
    stays that of a short clip's."""
    early: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    """Work started before the graph ran (``gaze.graph.early``): grounding calls by memory
    kind, and the observers."""
    observed: ObservedWindows = field(default_factory=lambda: ObservedWindows())
    """Which windows have their observation (live progress)."""
    started_at: float = field(default_factory=time.time)
    """When the run's work began (wall clock): the report's wall time counts from here, so work
    started before the graph ran (decoding, grounding, observers) counts too."""
    served_images: int | None = None
    """The most images per request the servers take, when the run's layout was fitted to it
    (``gaze.settings.served_layout``); None when the settings were used as given."""
    layout: GazeContext | None = None
    """The run's settings with its segments fitted to what the servers take, once known."""
    asked: GazeContext | None = None
    """The settings ``layout`` was fitted from."""

    async def fit(self, ctx: GazeContext, first_call: asyncio.Future[Any] | None) -> GazeContext:
        """``ctx`` fitted to what the run's servers take (``served_layout``), kept here for
        ``settings`` and the report."""
        self.asked = ctx
        self.layout, self.served_images = await served_layout(self.caller, ctx, first_call)
        return self.layout

    def served_for(self, windows: int) -> int | None:
        """``served_images`` where the fit shortened the segments of a clip of ``windows``
        windows; None where it did not (a short clip keeps its segments when a server takes
        fewer images than a long clip's would need)."""
        if self.served_images is None or self.layout is None or self.asked is None:
            return None
        fitted, asked = segment_windows(self.layout, windows), segment_windows(self.asked, windows)
        return self.served_images if fitted < asked else None

    def settings(self, given: GazeContext) -> GazeContext:
        """The settings the segments' calls and the report use: ``given`` (the run's context),
        its segments fitted to the servers once that is known. ``gaze.diagnose`` fits them
        before the graph runs; a graph run nobody prepared (Studio) in its ``observe`` node."""
        return self.layout or given

    async def aclose(self) -> None:
        for job in self.early.values():
            job.cancel()
        await asyncio.gather(*self.early.values(), return_exceptions=True)
        self.early.clear()
        await self.clips.aclose()
        if self.owns_caller:
            await self.caller.aclose()


def clip_store(ctx: GazeContext) -> ClipStore:
    """The clip store of a run with these settings."""
    return ClipStore(sampling_of(ctx), PIXEL_PASS if wants_pixels(ctx) else None)


_open: OrderedDict[str, RunServices] = OrderedDict()
_orphans: OrderedDict[str, None] = OrderedDict()


def new_run_id() -> str:
    return str(uuid.uuid4())


def open_run(
    run_id: str,
    ctx: GazeContext,
    *,
    caller: Caller | None = None,
    owns_caller: bool | None = None,
    clips: ClipStore | None = None,
    **caller_options: Any,
) -> RunServices:
    """Services for the run ``run_id``. Pass a shared ``caller`` to reuse its cache and limits
    across runs; the run closes only a caller it owns (by default, one it built). ``clips`` is
    a store the caller made earlier (``clip_store``) to start decoding before the clients."""
    if run_id in _open:
        raise RuntimeError(f"run {run_id} is already open")
    sampling = sampling_of(ctx)
    services = RunServices(
        caller=caller or build_caller(ctx, **caller_options),
        sampling=sampling,
        clips=clips or clip_store(ctx),
        owns_caller=caller is None if owns_caller is None else owns_caller,
        frames_gate=FrameBudget(ctx.frames_in_flight),
    )
    _open[run_id] = services
    return services


async def close_run(run_id: str) -> None:
    services = _open.pop(run_id, None)
    _orphans.pop(run_id, None)
    if services is not None:
        await services.aclose()


def _run_key(runtime: Runtime[GazeContext]) -> str:
    info = runtime.execution_info
    if info is not None and info.run_id is not None:
        return str(info.run_id)
    # no run id given (a bare graph.ainvoke): the context object is the run's identity
    return f"context:{id(runtime.context)}"


_building: dict[str, asyncio.Future[RunServices]] = {}


async def _open_orphan(key: str, ctx: GazeContext) -> RunServices:
    try:
        caller = await asyncio.to_thread(build_caller, ctx)
        opened = open_run(key, ctx, caller=caller, owns_caller=True)
        _orphans[key] = None
        while len(_orphans) > MAX_ORPHANS:
            oldest, _ = _orphans.popitem(last=False)
            await close_run(oldest)
        return opened
    finally:
        _building.pop(key, None)


def opened_by_caller(runtime: Runtime[GazeContext]) -> bool:
    """Whether whoever started this run opened its services first (``gaze.diagnose``, ``bench
    run``: backbones or a caller given from Python count as a model)."""
    return _run_key(runtime) in _open


async def services(runtime: Runtime[GazeContext]) -> RunServices:
    """The services of the run this node belongs to, built on first use when nobody opened
    them (client construction in a worker thread: no blocking I/O on the event loop)."""
    key = _run_key(runtime)
    found = _open.get(key)
    if found is not None:
        return found
    job = _building.get(key)
    if job is None:
        job = asyncio.ensure_future(_open_orphan(key, runtime.context))
        _building[key] = job
    return await asyncio.shield(job)


async def finish(runtime: Runtime[GazeContext]) -> None:
    """Called by the report node: closes services that the graph itself opened."""
    key = _run_key(runtime)
    if key in _orphans:
        await close_run(key)
