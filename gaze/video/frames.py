"""Frame preparation: resizing to a maximum side and encoding once per clip.

OpenCV is imported where a frame is first resized or encoded: the parent process of a command
uses this module for sizes and data URLs before its first request, and its frames come from the
decoding child (``gaze.video.decode_process``)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def fitted_size(width: int, height: int, max_side: int) -> tuple[int, int]:
    """(width, height) scaled so the longest side is at most ``max_side`` (never upscaled)."""
    longest = max(height, width)
    if longest <= max_side:
        return width, height
    scale = max_side / longest
    return max(1, round(width * scale)), max(1, round(height * scale))


def resize_max_side(frame: np.ndarray, max_side: int) -> np.ndarray:
    """Downscale so the longest side is at most ``max_side`` (never upscales)."""
    height, width = frame.shape[:2]
    size = fitted_size(width, height, max_side)
    if size == (width, height):
        return frame
    import cv2

    # INTER_AREA is slow on large factors; halving with pyrDown first is ~3x faster and still
    # low-pass filters, so small thumbnails do not alias.
    while max(frame.shape[:2]) > 2 * max_side:
        frame = cv2.pyrDown(frame)
    return cv2.resize(frame, size, interpolation=cv2.INTER_AREA)


def analysis_size(width: int, height: int, short_side: int, long_cap: int) -> tuple[int, int]:
    """(width, height) of a pixel-signal thumbnail: short side ``short_side``, long side capped.

    Scaling by the short side keeps wide multi-view clips (e.g. 960x192) from shrinking to a
    few pixels high."""
    scale = min(short_side / min(width, height), long_cap / max(width, height), 1.0)
    return max(1, round(width * scale)), max(1, round(height * scale))


def encode_jpeg(frame: np.ndarray, quality: int = 85) -> bytes:
    """JPEG bytes of a BGR frame (deterministic for identical pixels)."""
    import cv2

    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return buf.tobytes()


def jpeg_data_url(jpeg: bytes) -> bytes:
    """A JPEG as a base64 data URL, the form OpenAI-compatible servers and browsers take; plain
    ASCII, which JSON never escapes (``gaze.models.providers.openai_chat.request_json`` puts it
    in a request as it is)."""
    return b"data:image/jpeg;base64," + base64.b64encode(jpeg)


def data_url(jpeg: bytes) -> str:
    """``jpeg_data_url`` as text, for a page or a JSON value."""
    return jpeg_data_url(jpeg).decode("ascii")
