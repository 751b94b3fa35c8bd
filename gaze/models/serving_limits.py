"""What an endpoint accepts, found out before any clip work: images per prompt (vLLM refuses
more than ``--limit-mm-per-prompt``) and context length (``--max-model-len``, which vLLM
reports on ``/v1/models``). Each limit gaze would hit is one line saying what to change; where
the check can tell how many images the server does take, the error carries that number, so a
run can shorten its segments to fit instead (``gaze.settings.served_layout``)."""

from __future__ import annotations

import asyncio
import math
import re
from typing import Any

from gaze.models.caller import RetryPolicy
from gaze.models.protocol import (
    Backbone,
    EndpointUnreachableError,
    FewerImagesServed,
    ModelConfigError,
)
from gaze.models.registry import preflight
from gaze.models.tokens import frames_per_token_set, image_tokens, rule_for

TEXT_TOKENS = 6000
"""Room for the longest prompt text (codebook catalogue, memories, observations) and reply."""


SHORTER_SEGMENTS = "--max-segment-windows 2 --max-frames-per-call 32"
"""The layout both start-up errors suggest for a server that cannot take the default's
requests: half the frames per request, twice the calls."""


_REFUSAL = re.compile(r"at most (\d+) (image|video)", re.IGNORECASE)
"""vLLM's refusal: "At most N image(s) may be provided in one prompt" (or "request"; or
"video(s)")."""


OPENAI_IMAGES_PER_REQUEST = 500
"""The most images OpenAI's own API takes in one request (its vision guide's input
requirements: up to 500 images and 50 MB of image bytes per request)."""


def openai_takes(backbone: Backbone, images: int) -> bool:
    """Whether ``images`` images per request are within what OpenAI's own API documents, so
    its start-up check need not send them: at high detail 192 probe images bill about 49k
    tokens, paid again by every run the cache does not answer."""
    return rule_for(backbone) == "openai" and images <= OPENAI_IMAGES_PER_REQUEST


def images_refused_above(error: BaseException, video_frames: int = 0) -> int | None:
    """The frame limit a server's refusal states, when it states one: its images, or with
    ``video_frames`` frames per video, its videos' frames."""
    found = _REFUSAL.search(str(error))
    if found is None:
        return None
    return int(found.group(1)) * (video_frames if found.group(2).lower() == "video" else 1)


def images_within(backbone: Backbone, context: int, max_side: int, video: bool = False) -> int:
    """The most frames at ``max_side`` a request fits in ``context`` tokens."""
    return max(0, (context - TEXT_TOKENS) // _per_frame(backbone, max_side, video))


def _per_frame(backbone: Backbone, max_side: int, video: bool) -> int:
    """Tokens of one frame at ``max_side`` (4:3); in a video, its share of a set of frames
    (``tokens.frames_per_token_set``)."""
    width, height = max_side, math.ceil(max_side * 3 / 4)
    rule = rule_for(backbone)
    tokens = image_tokens(rule, width, height)
    return max(1, math.ceil(tokens / frames_per_token_set(rule)) if video else tokens)


def largest_request_tokens(
    backbone: Backbone, images: int, max_side: int, video: bool = False
) -> int:
    """Input tokens of the largest request gaze would send: ``images`` frames at
    ``max_side`` (4:3, the common case), as images or in videos, plus the prompt text and the
    reply."""
    return images * _per_frame(backbone, max_side, video) + TEXT_TOKENS


async def startup_check(
    backbone: Backbone,
    where: str,
    *,
    images: int,
    max_side: int,
    attempts: int,
    retry: RetryPolicy,
    timeout_s: float,
    video_frames: int = 0,
    judge_images: int = 0,
) -> None:
    """The whole start-up check of a backbone, its three questions asked at once (one call's
    latency, not three): does a one-image structured call work; does a call with ``images``
    images (with ``video_frames``, that many frames as videos of ``video_frames`` each:
    ``--frames-as video``; not asked of OpenAI's own API, which documents 500); what context
    length does the server report (or list); with videos, does a call with the judges'
    ``judge_images`` images (they still send images). The one-image answer is judged first:
    when it fails, its error says more than the larger call's."""

    def probe(images: int = 1, refused: str = "", videos: int = 0) -> asyncio.Future[None]:
        return asyncio.ensure_future(
            preflight(
                backbone,
                where,
                attempts=attempts,
                retry=retry,
                timeout_s=timeout_s,
                images=images,
                videos=videos,
                refused=refused,
            )
        )

    first = probe()
    many: asyncio.Future[None] | None = None
    judges: asyncio.Future[None] | None = None
    listed: asyncio.Future[int | None] | None = None
    videos = math.ceil(images / video_frames) if video_frames else 0
    if backbone.provider == "openai" and videos:
        refused = (
            f"the server refused a request with {videos} videos, which gaze sends with "
            "--frames-as video; serve a video model on vLLM with "
            f"--limit-mm-per-prompt '{{\"video\": {videos}}}', or use --frames-as images"
        )
        many = probe(1, refused, videos)
        if judge_images > 1:
            judged = (
                f"the server refuses {judge_images} images in one prompt, which gaze's judges "
                f"send (--sections pa_ia, progress); start vLLM with --limit-mm-per-prompt "
                f'\'{{"image": {judge_images}, "video": {videos}}}\''
            )
            judges = probe(judge_images, judged)
    elif backbone.provider == "openai" and images > 1 and not openai_takes(backbone, images):
        refused = (
            f"the server refuses {images} images in one prompt, which gaze sends; start vLLM "
            f"with --limit-mm-per-prompt '{{\"image\": {images}}}' or send fewer "
            f"({SHORTER_SEGMENTS}, or a lower --frames-per-window)"
        )
        many = probe(images, refused)
    if backbone.provider == "openai" and images > 1 and hasattr(backbone, "context_length"):
        listed = asyncio.ensure_future(_context_length(backbone, timeout_s))
    jobs = [job for job in (first, many, listed, judges) if job is not None]
    refusal: ModelConfigError | None = None
    try:
        await first
        if judges is not None:
            await judges  # refused: one line (the segments' fit cannot help the judges)
        if many is not None:
            try:
                await many
            except ModelConfigError as exc:
                if isinstance(exc, EndpointUnreachableError):
                    raise
                refusal = exc
        context = await listed if listed is not None else None
    finally:
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
    video = video_frames > 0
    needed = largest_request_tokens(backbone, images, max_side, video)
    too_long = context is not None and context < needed
    if refusal is None and not too_long:
        return
    refused_above = images_refused_above(refusal, video_frames) if refusal is not None else None
    context_fits = (
        images_within(backbone, context, max_side, video) if too_long and context else None
    )
    served = [refused_above] if refusal is not None else []
    served += [context_fits] if context_fits is not None else []
    if refusal is not None and not (
        context_fits is not None and refused_above is not None and context_fits < refused_above
    ):  # the tighter limit is the one the line names
        message = str(refusal)
    else:
        message = (
            f"{where}: the model's context is {context:,} tokens but gaze's largest request is "
            f"about {needed:,} ({images} {'frames as videos' if video else 'images'} at "
            f"{max_side} px); start vLLM with "
            f"--max-model-len {needed} or lower --max-side, or send shorter segments "
            f"({SHORTER_SEGMENTS})"
        )
    if None in served:  # refused without saying how many it takes
        raise ModelConfigError(message) from refusal
    raise FewerImagesServed(message, min(n for n in served if n is not None)) from refusal


async def _context_length(backbone: Any, timeout_s: float) -> int | None:
    try:  # the same total deadline as every request: a hanging /models must not stall
        found = await asyncio.wait_for(backbone.context_length(), timeout=timeout_s)
    except TimeoutError:
        return None
    return found if isinstance(found, int) else None
