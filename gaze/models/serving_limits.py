"""What an endpoint accepts, found out before any clip work: images per prompt (vLLM refuses
more than ``--limit-mm-per-prompt``) and context length (``--max-model-len``, which vLLM
reports on ``/v1/models``). Each limit gaze would hit is one line saying what to change."""

from __future__ import annotations

import asyncio
import math

from gaze.models.caller import RetryPolicy
from gaze.models.protocol import Backbone, ModelConfigError
from gaze.models.registry import preflight
from gaze.models.tokens import image_tokens, rule_for

TEXT_TOKENS = 6000
"""Room for the longest prompt text (codebook catalogue, memories, observations) and reply."""


def largest_request_tokens(backbone: Backbone, images: int, max_side: int) -> int:
    """Input tokens of the largest request gaze would send: ``images`` frames at
    ``max_side`` (4:3, the common case) plus the prompt text and the reply."""
    width, height = max_side, math.ceil(max_side * 3 / 4)
    return images * image_tokens(rule_for(backbone), width, height) + TEXT_TOKENS


async def check_serving_limits(
    backbone: Backbone,
    where: str,
    *,
    images: int,
    max_side: int,
    attempts: int,
    retry: RetryPolicy,
    timeout_s: float,
) -> None:
    if backbone.provider != "openai" or images <= 1:
        return
    await preflight(
        backbone,
        where,
        attempts=attempts,
        retry=retry,
        timeout_s=timeout_s,
        images=images,
        refused=(
            f"the server refuses {images} images in one prompt, which gaze sends; start vLLM "
            f"with --limit-mm-per-prompt '{{\"image\": {images}}}' or lower "
            "--max-frames-per-call and --frames-per-window"
        ),
    )
    context = None
    if hasattr(backbone, "context_length"):
        try:  # the same total deadline as every request: a hanging /models must not stall
            context = await asyncio.wait_for(backbone.context_length(), timeout=timeout_s)
        except TimeoutError:
            context = None
    needed = largest_request_tokens(backbone, images, max_side)
    if context is not None and context < needed:
        raise ModelConfigError(
            f"{where}: the model's context is {context:,} tokens but gaze's largest request is "
            f"about {needed:,} ({images} images at {max_side} px); start vLLM with "
            f"--max-model-len {needed} or lower --max-side or --max-frames-per-call"
        )
