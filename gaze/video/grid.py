"""Grid mode: a window's sampled frames tiled into one image, each tile stamped with its time
(RoboGaze's layout). The same clip is then sent as a few large images instead of many small
ones; each grid is encoded once per clip and reused byte for byte by every call that sees its
window. Tiles are read back from the frames' JPEGs at a reduced scale (no second decode of the
video)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import cv2
import numpy as np

from gaze.video.frames import encode_jpeg
from gaze.video.windows import Window


class Blobs(Protocol):
    def __getitem__(self, key: int, /) -> bytes: ...


BACKGROUND = 32
"""Grey of the grid's unused cells (a dark neutral, unlike any tile)."""


def grid_shape(tiles: int) -> tuple[int, int]:
    """(rows, columns): as square as possible, wider than tall (16 -> 4x4, 6 -> 2x3)."""
    columns = math.ceil(math.sqrt(tiles))
    return math.ceil(tiles / columns), columns


def _tile_source(jpeg: bytes) -> np.ndarray:
    """A frame's JPEG decoded at half scale (libjpeg scales while decoding: fast)."""
    frame = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_REDUCED_COLOR_2)
    if frame is None:
        raise ValueError("a frame's JPEG does not decode")
    return np.asarray(frame)


def _tile(jpeg: bytes, width: int, height: int) -> np.ndarray:
    return cv2.resize(_tile_source(jpeg), (width, height), interpolation=cv2.INTER_AREA)


def _stamp(tile: np.ndarray, time_s: float) -> None:
    """The tile's time in its top-left corner, white on a black box (readable on any frame)."""
    text = f"t={time_s:.2f}s"
    scale = max(0.35, tile.shape[0] / 300)
    thickness = max(1, round(scale * 1.5))
    (w, h), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness)
    cv2.rectangle(tile, (0, 0), (w + 6, h + base + 6), (0, 0, 0), thickness=-1)
    cv2.putText(tile, text, (3, h + 3), cv2.FONT_HERSHEY_SIMPLEX, scale, (255, 255, 255), thickness)


def window_grid(
    jpegs: Sequence[bytes], times_s: Sequence[float], max_side: int, quality: int
) -> bytes:
    """One JPEG whose longest side is ``max_side``: the frames tiled in time order, left to
    right and top to bottom, each stamped with its time."""
    height, width = _tile_source(jpegs[0]).shape[:2]
    aspect = width / height
    rows, columns = grid_shape(len(jpegs))
    if aspect * columns >= rows:  # the grid is wider than tall: width is the longest side
        tile_w = max(1, max_side // columns)
        tile_h = max(1, round(tile_w / aspect))
    else:
        tile_h = max(1, max_side // rows)
        tile_w = max(1, round(tile_h * aspect))
    canvas = np.full((rows * tile_h, columns * tile_w, 3), BACKGROUND, np.uint8)
    for n, (jpeg, time_s) in enumerate(zip(jpegs, times_s, strict=True)):
        tile = _tile(jpeg, tile_w, tile_h)
        _stamp(tile, time_s)
        row, column = divmod(n, columns)
        canvas[row * tile_h : (row + 1) * tile_h, column * tile_w : (column + 1) * tile_w] = tile
    return encode_jpeg(canvas, quality)


def window_grids(
    windows: Sequence[Window], jpegs: Blobs, max_side: int, quality: int
) -> dict[int, bytes]:
    """Window index -> its grid JPEG."""
    return {
        w.index: window_grid([jpegs[i] for i in w.frame_indices], w.timestamps_s, max_side, quality)
        for w in windows
    }
