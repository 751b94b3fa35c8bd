"""Following a changed region through the neighbouring analysis frames, so that an event names the
object in every frame that shows it: an appeared object forward from its first frame, a vanished
one backward from its last.

The region's first (or last) picture is the template for every frame, never updated, so the
track cannot drift onto the background; it ends where the best match in a small search window
is no longer close (the object left, was covered, or the picture changed).
"""

from __future__ import annotations

import cv2
import numpy as np

from gaze.video.spill import Frames

TRACK_S = 1.0
"""How far from the change a region is followed, seconds."""
SEARCH_PX = 6
"""How far the region may move between analysis frames, thumbnail pixels."""
MATCH_MAX = 0.2
"""Normalised squared difference (0 identical .. 1) above which the region is lost."""
MIN_SIDE_PX = 4

Box = tuple[float, float, float, float]


def _pixels(box: Box, width: int, height: int) -> tuple[int, int, int, int]:
    x0, y0 = int(box[0] * width), int(box[1] * height)
    x1 = max(int(round(box[2] * width)), x0 + MIN_SIDE_PX)
    y1 = max(int(round(box[3] * height)), y0 + MIN_SIDE_PX)
    return x0, y0, min(x1, width), min(y1, height)


def follow(
    thumbs: Frames, index: int, box: Box, direction: int, most: int
) -> list[tuple[int, Box]]:
    """``(frame index, box)`` for up to ``most`` frames from ``index`` in ``direction`` (+1 or
    -1) where the region seen in frame ``index`` at ``box`` is still found."""
    height, width = thumbs.shape[1:3]
    x0, y0, x1, y1 = _pixels(box, width, height)
    template = np.asarray(thumbs[index])[y0:y1, x0:x1]
    th, tw = template.shape[:2]
    if th < MIN_SIDE_PX or tw < MIN_SIDE_PX:
        return []
    found: list[tuple[int, Box]] = []
    j = index
    for _ in range(most):
        j += direction
        if not 0 <= j < len(thumbs):
            break
        sx0, sy0 = max(0, x0 - SEARCH_PX), max(0, y0 - SEARCH_PX)
        sx1, sy1 = min(width, x0 + tw + SEARCH_PX), min(height, y0 + th + SEARCH_PX)
        window = np.asarray(thumbs[j])[sy0:sy1, sx0:sx1]
        if window.shape[0] < th or window.shape[1] < tw:
            break
        scores = cv2.matchTemplate(window, template, cv2.TM_SQDIFF_NORMED)
        best, _, at, _ = cv2.minMaxLoc(scores)
        if best > MATCH_MAX:
            break
        x0, y0 = sx0 + at[0], sy0 + at[1]
        found.append(
            (
                j,
                (
                    round(x0 / width, 4),
                    round(y0 / height, 4),
                    round((x0 + tw) / width, 4),
                    round((y0 + th) / height, 4),
                ),
            )
        )
    return found
