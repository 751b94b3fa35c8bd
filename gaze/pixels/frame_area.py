"""Where a clip's picture is: inside any flat, unchanging margin that ends at a border.

Clips from project pages are often letterboxed, pillarboxed or shown as an inset pane on a slide
with captions. Something entering or leaving the picture at the pane's edge is the same as at the
frame's edge (no evidence of a failure), so the border rule needs the pane's edges, not the
file's.
"""

from __future__ import annotations

import numpy as np

from gaze.video.spill import Frames

MARGIN_SAMPLES = 32
"""Frames, spread over the clip, that judge the margins."""
MARGIN_STILL = 3.0
"""A margin line's pixels vary over time by at most this many grey levels (std), for most of
the line (an encoder's touch; a scene's sensor noise and motion vary more)..."""
MARGIN_FLAT = 6.0
"""...and the line is flat: most of its time-averaged pixels lie within this many grey levels
of the line's median (a textured table or wall at the edge of a still camera's view is not a
margin; a slide's rounded corner or a caption's letter crossing the line is allowed)..."""
MARGIN_SHARE = 0.9
"""...where "most" is this share of the line."""
MARGIN_MIN = 0.03
"""A margin is at least this share of the frame's width or height (a frame's own 1-2 px
border line is not a margin)..."""
EDGE_LINES = 0.02
"""...and may start this share of the frame in from the edge (a thin bright rim or a rounded
slide corner at the very edge)."""
BLEND_STILL = 0.75
"""The line where a pane meets its margin blends the two in a scaled-down thumbnail: the first
line past a margin belongs to it when it is flat and still over this share of its length
(UniSim's slide: 0.86 still on that line, 0.31 on the pane's own lines). Without it the pane's
edge sat a line too far out, and the arm entering at the bottom of the pane was taken for a
thing appearing inside it."""

BORDER_CONTRAST = 12.0
"""A margin ends at a border: the picture's lines just inside it differ from the margin's colour
by more than this many grey levels..."""
BORDER_SHARE = 0.5
"""...along at least this share of their length. A pane's edge is a line across the picture;
a flat, still table under a still camera is the picture itself, and the lines above it show
the same table around the things on it (forge v2's fixed stage: 0.03-0.3 of such a line
differs; a letterbox or slide around a scene: 0.8-1.0)."""

Box = tuple[float, float, float, float]
"""(x0, y0, x1, y1) as fractions of the frame's width and height."""
FULL: Box = (0.0, 0.0, 1.0, 1.0)


def _margin(still: np.ndarray, flat: np.ndarray) -> int:
    """How many lines from the edge belong to a margin (lines still over MARGIN_SHARE of their
    length and flat, after at most EDGE_LINES of rim, and the blended line after them,
    BLEND_STILL); 0 when there is no margin. ``still`` is each line's still share."""
    line = (still >= MARGIN_SHARE) & flat
    size = len(line)
    for start in range(max(1, round(EDGE_LINES * size)) + 1):
        if start >= size or not line[start]:
            continue
        rest = line[start:]
        end = start + (int(np.argmin(rest)) if not rest.all() else len(rest))
        if end - start < MARGIN_MIN * size:
            return 0
        blended = end < size and flat[end] and still[end] >= BLEND_STILL
        return end + 1 if blended else end
    return 0


def _bordered(mean: np.ndarray, depth: int) -> int:
    """``depth`` when the margin of that many rows at the top of ``mean`` (time-averaged grey,
    rows first) ends at a border (BORDER_CONTRAST, BORDER_SHARE); else 0."""
    if depth == 0 or depth + 2 > len(mean):
        return 0
    colour = float(np.median(mean[:depth]))
    inside = mean[depth : depth + 2]
    differs = (np.abs(inside - colour) > BORDER_CONTRAST).mean(axis=1)
    return depth if float(differs.max()) >= BORDER_SHARE else 0


def picture_box(thumbs: Frames) -> Box:
    """The picture's box in fractions of the frame (the whole frame when there is no margin);
    margins are judged on a few frames spread over the clip."""
    n = len(thumbs)
    if n < 2:
        return FULL
    picks = np.unique(np.linspace(0, n - 1, min(n, MARGIN_SAMPLES)).round().astype(int))
    grey = np.stack([np.asarray(thumbs[int(k)], dtype=np.float32).mean(axis=2) for k in picks])
    spread = grey.std(axis=0)  # over time, per pixel
    mean = grey.mean(axis=0)
    h, w = mean.shape
    rows_still = (spread <= MARGIN_STILL).mean(axis=1)
    cols_still = (spread <= MARGIN_STILL).mean(axis=0)
    rows_flat = (np.abs(mean - np.median(mean, axis=1, keepdims=True)) <= MARGIN_FLAT).mean(
        axis=1
    ) >= MARGIN_SHARE
    cols_flat = (np.abs(mean - np.median(mean, axis=0, keepdims=True)) <= MARGIN_FLAT).mean(
        axis=0
    ) >= MARGIN_SHARE
    top = _bordered(mean, _margin(rows_still, rows_flat))
    bottom = _bordered(mean[::-1], _margin(rows_still[::-1], rows_flat[::-1]))
    left = _bordered(mean.T, _margin(cols_still, cols_flat))
    right = _bordered(mean.T[::-1], _margin(cols_still[::-1], cols_flat[::-1]))
    if top + bottom >= h or left + right >= w:  # a still, flat clip: no picture to find
        return FULL
    return (left / w, top / h, (w - right) / w, (h - bottom) / h)
