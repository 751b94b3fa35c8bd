"""Run-scoped services built from the context once per run: the caller (backbones, cache,
concurrency, retry) and the sampling settings."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from gaze.errors import GazeInputError
from gaze.graph.context import JUDGES, GazeContext
from gaze.models.cache import ResponseCache, public_endpoint
from gaze.models.caller import Caller, RetryPolicy
from gaze.models.registry import bind_roles
from gaze.video.windows import SamplingSettings

_SLOT = "_gaze_services"


@dataclass
class Services:
    caller: Caller
    sampling: SamplingSettings


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


def build_services(ctx: GazeContext) -> Services:
    check_context(ctx)
    base_url = ctx.resolved_base_url()
    bindings = bind_roles(ctx.resolved_model(), ctx.roles, base_url, ctx.backbones)
    endpoint = public_endpoint(base_url)
    caller = Caller(
        bindings,
        endpoints={"default": endpoint},
        cache=ResponseCache() if ctx.use_cache else None,
        concurrency=ctx.concurrency,
        retry=RetryPolicy(attempts=ctx.retry_attempts, initial_s=ctx.retry_initial_s),
    )
    sampling = SamplingSettings(
        window_s=ctx.window_s, frames_per_window=ctx.frames_per_window, max_side=ctx.max_side
    )
    return Services(caller, sampling)


def services(ctx: GazeContext) -> Services:
    """The run's services, built on first use in the running event loop (a context reused in a
    later ``asyncio.run`` gets fresh ones: semaphores belong to one loop)."""
    loop = asyncio.get_running_loop()
    slot: dict[str, Any] = vars(ctx)
    held = slot.get(_SLOT)
    if held is None or held[0] is not loop:
        held = (loop, build_services(ctx))
        slot[_SLOT] = held
    return held[1]
