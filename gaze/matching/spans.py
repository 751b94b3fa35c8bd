"""Temporal overlap of event spans: frame-level IoU (robogaze) and continuous IoU (glide).

Contract: spans are given as arrays ``starts`` and ``ends`` in seconds (start <= end). Frame-level
IoU counts the frames k = 0, 1, ... with start <= k/fps <= end; a span covering no frame (shorter
than a frame interval) covers the single frame nearest its midpoint, k = round((s+e)/2 * fps)
with halves rounded up. Both are pure and vectorised: (N,) x (M,) -> (N, M).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

EPS = 1e-3
"""Tolerance, in frames, for k/fps landing on a span boundary: float error (0.3*10 != 3) and
times kept to 6 decimals (1.583333 s is frame 38 of a 24 fps clip, 37.99999 frames in)."""


def frame_range(starts: np.ndarray, ends: np.ndarray, fps: float) -> tuple[np.ndarray, np.ndarray]:
    """First and last covered frame index of every span (inclusive)."""
    starts = np.asarray(starts, dtype=np.float64)
    ends = np.asarray(ends, dtype=np.float64)
    first = np.ceil(starts * fps - EPS).astype(np.int64)
    last = np.floor(ends * fps + EPS).astype(np.int64)
    empty = first > last
    if empty.any():
        mid = np.floor((starts[empty] + ends[empty]) / 2 * fps + 0.5).astype(np.int64)
        first[empty] = mid
        last[empty] = mid
    return first, last


def frame_iou(
    pred: tuple[np.ndarray, np.ndarray], ref: tuple[np.ndarray, np.ndarray], fps: float
) -> np.ndarray:
    """(N, M) frame-level IoU between predicted and reference spans."""
    p0, p1 = frame_range(*pred, fps)
    r0, r1 = frame_range(*ref, fps)
    inter = np.minimum(p1[:, None], r1[None, :]) - np.maximum(p0[:, None], r0[None, :]) + 1
    inter = np.clip(inter, 0, None)
    union = (p1 - p0 + 1)[:, None] + (r1 - r0 + 1)[None, :] - inter
    iou: np.ndarray = inter / union
    return iou


def continuous_iou(
    pred: tuple[np.ndarray, np.ndarray], ref: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """(N, M) IoU in seconds, |A∩B| / (|A| + |B| - |A∩B|); 0 when both spans are instants."""
    ps, pe = (np.asarray(a, dtype=np.float64) for a in pred)
    rs, re_ = (np.asarray(a, dtype=np.float64) for a in ref)
    inter = np.clip(
        np.minimum(pe[:, None], re_[None, :]) - np.maximum(ps[:, None], rs[None, :]), 0, None
    )
    union = (pe - ps)[:, None] + (re_ - rs)[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    return out


Intervals = list[tuple[float, float]]


def merged(intervals: Sequence[tuple[float, float]]) -> Intervals:
    """The intervals sorted and joined wherever the next starts at or before the last ends."""
    out: list[list[float]] = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(a, b) for a, b in out]


def interval_set_iou(pred: Intervals, ref: Intervals, fps: float | None) -> float:
    """IoU of two events that may each span several intervals (a peer's multi-interval bug):
    over the frames their intervals cover when ``fps`` is given (each interval by the rule of
    ``frame_range``), else over their merged time in seconds (0 when both are instants)."""
    if fps is not None:
        frames = []
        for side in (pred, ref):
            starts, ends = np.array([s for s, _ in side]), np.array([e for _, e in side])
            first, last = frame_range(starts, ends, fps)
            frames.append({k for a, b in zip(first, last, strict=True) for k in range(a, b + 1)})
        covered = len(frames[0] | frames[1])
        return len(frames[0] & frames[1]) / covered if covered else 0.0
    a, b = merged(pred), merged(ref)
    inter = sum(max(0.0, min(e1, e2) - max(s1, s2)) for s1, e1 in a for s2, e2 in b)
    union = sum(e - s for s, e in a) + sum(e - s for s, e in b) - inter
    return inter / union if union > 0 else 0.0
