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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gaze.agents.judges import MAX_JUDGE_FRAMES, MAX_PROGRESS_CHUNK
from gaze.environment import from_environment
from gaze.errors import GazeInputError
from gaze.graph.context import JUDGES, GazeContext, wants_pixels
from gaze.models.cache import ResponseCache
from gaze.models.caller import Caller, RetryPolicy
from gaze.models.pool import EndpointPool, check_pool
from gaze.models.prices import Pricing
from gaze.models.protocol import Backbone
from gaze.models.registry import bind_roles
from gaze.models.serving_limits import startup_check
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
    frames_gate: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(32))
    """Calls holding their frames at once: a long clip's hundreds of calls do not all load
    their images before the request limit lets them go (memory stays bounded)."""
    early: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    """Work started before the graph ran (``gaze.graph.early``): grounding calls by memory
    kind, and the observers."""
    observed: ObservedWindows = field(default_factory=lambda: ObservedWindows())
    """Which windows have their observation (live progress)."""
    started_at: float = field(default_factory=time.time)
    """When the run's work began (wall clock): the report's wall time counts from here, so work
    started before the graph ran (decoding, grounding, observers) counts too."""

    async def aclose(self) -> None:
        for job in self.early.values():
            job.cancel()
        await asyncio.gather(*self.early.values(), return_exceptions=True)
        self.early.clear()
        self.clips.close()
        if self.owns_caller:
            await self.caller.aclose()


def check_context(ctx: GazeContext) -> None:
    """Settings that cannot work are refused before any clip work."""
    unknown = [j for j in ctx.judges if j not in JUDGES]
    if unknown:
        raise GazeInputError(f"unknown judges {unknown}; known: {', '.join(JUDGES)}")
    if ctx.progress_style not in ("sequence", "pair", "recorded"):
        raise GazeInputError("progress_style must be sequence, pair or recorded")
    if "progress" in ctx.judges and ctx.progress_style == "recorded" and not ctx.progress_file:
        raise GazeInputError("progress_style=recorded needs progress_file")
    if not 1 <= ctx.top_k <= 6:
        raise GazeInputError("top_k must be between 1 and 6")
    if not 0 <= ctx.critic_threshold <= 1 or not 0 < ctx.merge_iou <= 1:
        raise GazeInputError("critic_threshold must be in [0, 1] and merge_iou in (0, 1]")
    if ctx.window_s <= 0 or ctx.frames_per_window < 1 or ctx.max_frames_per_call < 1:
        raise GazeInputError("window_s, frames_per_window and max_frames_per_call must be positive")
    if ctx.max_retries < 0 or ctx.concurrency < 1 or ctx.endpoint_concurrency < 0:
        raise GazeInputError(
            "max_retries must be >= 0, concurrency >= 1 and endpoint_concurrency >= 0"
        )
    if not 1 <= ctx.jpeg_quality <= 100 or ctx.image_detail not in ("auto", "low", "high"):
        raise GazeInputError("jpeg_quality must be 1-100 and image_detail auto, low or high")
    if not 0 <= ctx.temperature <= 2:
        raise GazeInputError("temperature must be in [0, 2]")
    if ctx.request_timeout_s <= 0 or ctx.clip_timeout_s <= 0 or ctx.breaker_after < 0:
        raise GazeInputError(
            "request_timeout_s and clip_timeout_s must be positive, breaker_after >= 0"
        )


def sampling_of(ctx: GazeContext) -> SamplingSettings:
    return SamplingSettings(
        window_s=ctx.window_s,
        frames_per_window=ctx.frames_per_window,
        max_side=ctx.max_side,
        jpeg_quality=ctx.jpeg_quality,
        grid=ctx.grid,
    )


def most_images(ctx: GazeContext) -> int:
    """The most images one request of this run can carry."""
    judge_images = MAX_JUDGE_FRAMES + 1 if "pa_ia" in ctx.judges else 0  # + the initial scene
    progress_images = MAX_PROGRESS_CHUNK if "progress" in ctx.judges else 0
    return max(ctx.max_frames_per_call, ctx.frames_per_window, judge_images, progress_images)


def build_caller(
    ctx: GazeContext, backbones: Mapping[str, Backbone] | None = None, *, check: bool = True
) -> Caller:
    """The caller a context describes; ``backbones`` (objects, from Python) win over names.
    Builds SDK clients (reads certificates): call it from a worker thread inside a server."""
    check_context(ctx)
    bindings = bind_roles(
        ctx.resolved_model(),
        ctx.roles,
        ctx.resolved_base_url(),
        backbones,
        ctx.image_detail,
        ctx.endpoint_concurrency,
        most_images(ctx),
        ctx.request_timeout_s,
    )
    retry = RetryPolicy(initial_s=ctx.retry_initial_s, max_s=ctx.retry_max_s)

    async def check_one(backbone: Backbone, where: str) -> None:
        await startup_check(
            backbone,
            where,
            images=most_images(ctx),
            max_side=ctx.max_side,
            attempts=1 + ctx.max_retries,
            retry=retry,
            timeout_s=ctx.request_timeout_s,
        )

    async def start_check(backbone: Backbone, where: str) -> None:
        if isinstance(backbone, EndpointPool):
            await check_pool(backbone, where, check_one)
        else:
            await check_one(backbone, where)

    cache = ResponseCache() if ctx.use_cache else None
    if cache is not None:
        cache.open()  # an unusable cache folder fails now, in one line
    return Caller(
        bindings.backbones,
        endpoints=bindings.endpoints,
        cache=cache,
        concurrency=ctx.concurrency,
        retry=retry,
        temperature=ctx.temperature,
        pricing=Pricing.load(
            ctx.prices_file or from_environment("prices_file"),
            ctx.usd_per_mtok_in,
            ctx.usd_per_mtok_out,
        ),
        check=start_check if check else None,
        request_timeout_s=ctx.request_timeout_s,
        breaker_after=ctx.breaker_after,
        max_reply_chars=ctx.max_reply_chars,
    )


def clip_store(ctx: GazeContext) -> ClipStore:
    """The clip store of a run with these settings."""
    return ClipStore(sampling_of(ctx), pixels=wants_pixels(ctx))


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
        frames_gate=asyncio.Semaphore(ctx.concurrency),
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
