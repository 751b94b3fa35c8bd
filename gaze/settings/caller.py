"""The caller and sampling a run's settings describe, and the check that refuses settings that
cannot work (before any clip work)."""

from __future__ import annotations

from collections.abc import Mapping

from gaze.agents.judge_limits import judge_images
from gaze.environment import from_environment
from gaze.errors import GazeInputError
from gaze.models.cache import ResponseCache
from gaze.models.caller import Caller, RetryPolicy
from gaze.models.pool import EndpointPool, check_pool
from gaze.models.prices import Pricing
from gaze.models.protocol import Backbone
from gaze.models.registry import bind_roles
from gaze.models.serving_limits import startup_check
from gaze.models.tokens import rule_for
from gaze.settings.context import SECTIONS, GazeContext
from gaze.video.windows import SamplingSettings


def check_context(ctx: GazeContext) -> None:
    """Settings that cannot work are refused before any clip work."""
    unknown = [j for j in ctx.sections if j not in SECTIONS]
    if unknown:
        raise GazeInputError(f"unknown sections {unknown}; known: {', '.join(SECTIONS)}")
    if ctx.progress_style not in ("sequence", "pair", "recorded"):
        raise GazeInputError("progress_style must be sequence, pair or recorded")
    if "progress" in ctx.sections and ctx.progress_style == "recorded" and not ctx.progress_file:
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
    if ctx.frames_as not in ("images", "video"):
        raise GazeInputError("frames_as must be images or video")
    if ctx.frames_as == "video" and ctx.grid:
        raise GazeInputError(
            "frames_as=video sends each window as one video and grid as one image: choose one"
        )
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
    """The most images (or frames in videos) one request of this run can carry."""
    return max(ctx.max_frames_per_call, ctx.frames_per_window, judge_images(ctx.sections))


VIDEO_ROLES = ("observer", "specialist", "critic")
"""The roles whose calls send a window's frames as a video with frames_as=video."""


def check_video_backbones(backbones: Mapping[str, Backbone]) -> None:
    """frames_as=video only where a video part can go: an OpenAI-compatible server of one's own
    (vLLM's ``data:video/jpeg``), or the scripted backbone. OpenAI's and Gemini's APIs take no
    such part, and sending the frames as images instead would bill what the user chose not to."""
    for role in VIDEO_ROLES:
        backbone = backbones.get(role, backbones.get("default"))
        if backbone is None or backbone.provider == "scripted":
            continue
        if backbone.provider != "openai" or rule_for(backbone) != "patches28":
            raise GazeInputError(
                f"--frames-as video: the {role} model {backbone.provider}:{backbone.model} "
                "takes no video parts; it needs an OpenAI-compatible server of a video model "
                "(vLLM, with --base-url), or use --frames-as images"
            )


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
    if ctx.frames_as == "video":
        check_video_backbones(bindings.backbones)
    retry = RetryPolicy(initial_s=ctx.retry_initial_s, max_s=ctx.retry_max_s)

    async def check_one(backbone: Backbone, where: str) -> None:
        await startup_check(
            backbone,
            where,
            images=most_images(ctx),
            max_side=ctx.max_side,
            video_frames=ctx.frames_per_window if ctx.frames_as == "video" else 0,
            judge_images=judge_images(ctx.sections) if ctx.frames_as == "video" else 0,
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
        checked_for=f"{most_images(ctx)} at {ctx.max_side} px"
        + (f" as videos of {ctx.frames_per_window}" if ctx.frames_as == "video" else ""),
        request_timeout_s=ctx.request_timeout_s,
        breaker_after=ctx.breaker_after,
        max_reply_chars=ctx.max_reply_chars,
    )
