"""Estimated input tokens of a request, from each provider's published image-token rules.

Servers report usage after the fact (and some report nothing, or nothing for images); these
estimates let a user see, before and beside the bill, what a layout or an image budget costs.

- ``openai`` (OpenAI's hosted models): detail low = 85 tokens; otherwise the image is fitted in
  2048x2048, its short side scaled to 768, and each 512 px tile costs 170 plus 85 per image.
- ``gemini``: 258 tokens per image up to 384 px a side; larger images are tiled in 768x768
  tiles of 258 tokens each.
- ``patches28`` (Qwen-VL style, the usual vLLM / SGLang vision model): one token per 28x28
  patch of the image as sent; a video's frames are merged two by two in time (Qwen-VL's
  temporal patch of 2 frames), so a video of n frames costs ceil(n / 2) frames' tokens.
Text is estimated at 4 characters a token.
"""

from __future__ import annotations

import math

from gaze.models.protocol import Backbone, ImagePart, ModelRequest, TextPart, VideoPart

RULES = ("openai", "gemini", "patches28")


def rule_for(backbone: Backbone) -> str:
    """Which image-token rule a backbone's server follows."""
    if backbone.provider == "gemini":
        return "gemini"
    base_url = getattr(backbone, "base_url", None)
    if backbone.provider == "openai" and (not base_url or "api.openai.com" in base_url):
        return "openai"
    return "patches28"


def jpeg_size(jpeg: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's frame header, without decoding it ((0, 0) if absent). Not
    cached: a cache keyed on the image held every frame of a clip in memory (225 MB for a
    10-minute clip), and reading the header skips from marker to marker in a few steps."""
    i = 2
    while i + 9 < len(jpeg):
        if jpeg[i] != 0xFF:
            i += 1
            continue
        marker = jpeg[i + 1]
        if marker in (0xC0, 0xC1, 0xC2):
            height = int.from_bytes(jpeg[i + 5 : i + 7], "big")
            width = int.from_bytes(jpeg[i + 7 : i + 9], "big")
            return width, height
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        i += 2 + int.from_bytes(jpeg[i + 2 : i + 4], "big")
    return 0, 0


def image_tokens(rule: str, width: int, height: int, detail: str = "auto") -> int:
    if width <= 0 or height <= 0:
        return 0
    if rule == "openai":
        if detail == "low":
            return 85
        scale = min(1.0, 2048 / max(width, height))
        w, h = width * scale, height * scale
        scale = min(1.0, 768 / min(w, h))
        w, h = w * scale, h * scale
        return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)
    if rule == "gemini":
        if width <= 384 and height <= 384:
            return 258
        return 258 * math.ceil(width / 768) * math.ceil(height / 768)
    return math.ceil(width / 28) * math.ceil(height / 28)


def frames_per_token_set(rule: str) -> int:
    """How many consecutive frames of a video share one set of tokens on a server of this image
    rule: two on a patch-rule server (Qwen2-VL, Qwen2.5-VL and Qwen3-VL merge each two frames,
    a temporal patch of 2), one (each frame in full) on any other."""
    return 2 if rule == "patches28" else 1


def video_tokens(rule: str, video: VideoPart, detail: str = "auto") -> int:
    """Tokens of a video part: one image's worth per set of frames (``frames_per_token_set``)."""
    if not video.frames:
        return 0
    frame = image_tokens(rule, *jpeg_size(video.frames[0].jpeg), detail)
    return frame * math.ceil(len(video.frames) / frames_per_token_set(rule))


def estimate_input_tokens(request: ModelRequest, rule: str, detail: str = "auto") -> int:
    """Estimated input tokens of a whole request (text at 4 characters a token)."""
    total = 0
    for message in request.messages:
        for part in message.parts:
            if isinstance(part, ImagePart):
                total += image_tokens(rule, *jpeg_size(part.jpeg), detail)
            elif isinstance(part, VideoPart):
                total += video_tokens(rule, part, detail)
            elif isinstance(part, TextPart):
                total += math.ceil(len(part.text) / 4)
    return total
