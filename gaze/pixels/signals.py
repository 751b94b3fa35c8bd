"""Per-frame pixel signals (DESIGN section 8), computed on the analysis thumbnails.

Every pairwise signal at frame i compares frame i with frame i-1; frame 0 gets 0. Values are in
thumbnail pixels (grey levels 0-255, or pixels of displacement), so thresholds are comparable
across clips of any resolution.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from gaze.video.clip import AnalysisFrames

SAME_PICTURE_DIFF = 0.05
"""Mean grey difference below which two decoded frames show the same picture (a repeat)."""
REPEAT_SHARE = 0.6
"""When fewer than this share of frames show a new picture, motion is judged on distinct frames."""
CHANGE_LEVEL = 30
"""A pixel counts as changed when some colour channel moves by more than this (0-255)."""


@dataclass
class SignalSeries:
    """All per-frame signals of one clip, aligned with ``times_s``."""

    times_s: np.ndarray
    step_start_s: np.ndarray
    """Time of the frame each step i starts from (the previous decoded frame, even when that
    frame was a duplicate left out of the analysis)."""
    frame_diff: np.ndarray
    """Pixel frame consistency: mean absolute grey difference to the previous frame."""
    changed_fraction: np.ndarray
    """Share of pixels whose colour changed by more than CHANGE_LEVEL since the previous frame."""
    motion: np.ndarray
    """Optical-flow motion magnitude: mean flow vector length, thumbnail pixels per frame."""
    shift_x: np.ndarray
    """Global (camera) translation since the previous frame: median flow, x, thumbnail pixels."""
    shift_y: np.ndarray
    """Global translation since the previous frame: median flow, y."""
    sharpness: np.ndarray
    """Contrast-normalised Laplacian variance: high = crisp edges; darkening leaves it unchanged."""
    brightness: np.ndarray
    """Mean grey level, 0-255."""
    contrast: np.ndarray
    """Standard deviation of grey levels."""

    @property
    def shifts(self) -> np.ndarray:
        """(N, 2): the camera's translation since the previous frame, x and y."""
        return np.stack([self.shift_x, self.shift_y], axis=1)

    def as_dict(self, digits: int = 4) -> dict[str, list[float]]:
        names = [
            "frame_diff",
            "changed_fraction",
            "motion",
            "shift_x",
            "shift_y",
            "sharpness",
            "brightness",
            "contrast",
        ]
        return {n: [round(float(v), digits) for v in getattr(self, n)] for n in names}


def channel_change(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pixel, the largest absolute change over the colour channels (uint8, via OpenCV)."""
    diff = cv2.absdiff(a, b)
    b_, g_, r_ = cv2.split(diff)
    return np.asarray(cv2.max(cv2.max(b_, g_), r_))


def exact_median(values: np.ndarray) -> np.floating:
    """``np.median(values)`` in its dtype and to the last bit, in a fraction of its time: the
    meter takes two medians per flow field, beside decoding, on cores that decoding wants. One
    partition for the lower middle, then the least value above it, where ``np.median``
    partitions for both middles and for the NaN it would propagate: a NaN sorts last, so it
    lands on the lower middle or above it, where the least or greatest value propagates it. A
    zero comes back as +0.0 (which of -0.0 and +0.0 a partition puts in the middle is
    arbitrary, in numpy's too)."""
    count = values.size
    lower = (count - 1) // 2
    part = np.partition(values, lower, axis=None)  # a flattened copy
    low: np.floating = part[lower]
    above = part[lower + 1 :]
    zero = low.dtype.type(0)
    if count % 2:
        top: np.floating = above.max() if above.size else low
        return top if np.isnan(top) else low + zero
    middle: np.floating = (low + above.min()) / low.dtype.type(2)  # as np.median takes it
    return middle + zero


class SignalMeter:
    """The per-step signals, one thumbnail at a time (decoding can hand them over as it goes);
    ``series`` then gives exactly what ``compute_signals`` gives for the same frames."""

    def __init__(self) -> None:
        # A fresh DIS instance per clip: its state never carries over between clips.
        self._flow = cv2.DISOpticalFlow.create(cv2.DISOPTICAL_FLOW_PRESET_FAST)
        self._previous: tuple[np.ndarray, np.ndarray] | None = None
        self._rows: list[tuple[float, float, float, float, float]] = []

    def add(self, current: np.ndarray) -> None:
        grey = cv2.cvtColor(current, cv2.COLOR_BGR2GRAY)
        if self._previous is None:
            self._rows.append((0.0, 0.0, 0.0, 0.0, 0.0))
            self._previous = current, grey
            return
        previous, previous_grey = self._previous
        # |a - b| of uint8 frames is exact in uint8: no float copy is needed
        diff = float(cv2.absdiff(grey, previous_grey).mean())
        moved = channel_change(current, previous) > CHANGE_LEVEL
        changed = np.count_nonzero(moved) / float(grey.size)
        motion = sx = sy = 0.0
        # A repeated picture has no motion, and flow is the costliest signal: skip repeats.
        if diff >= SAME_PICTURE_DIFF:
            field = np.asarray(self._flow.calc(previous_grey, grey, None))  # type: ignore[call-overload]
            motion = float(cv2.magnitude(field[..., 0], field[..., 1]).mean())
            # The median flow vector is the camera's motion as long as less than half the image
            # moves on its own (a robot arm rarely covers half the view).
            sx, sy = float(exact_median(field[..., 0])), float(exact_median(field[..., 1]))
        self._rows.append((diff, changed, motion, sx, sy))
        self._previous = current, grey

    def series(
        self, frames: AnalysisFrames, step_start_s: np.ndarray | None = None
    ) -> SignalSeries:
        """The signals of ``frames``, whose thumbnails are the ones added, in order."""
        if len(self._rows) != len(frames.thumbs):
            raise ValueError(f"{len(self._rows)} thumbnails measured, {len(frames.thumbs)} given")
        rows = np.asarray(self._rows, dtype=np.float64).reshape(-1, 5)
        contrast = frames.contrast
        sharpness = frames.sharpness / (contrast**2 + 1.0)
        if step_start_s is None:
            step_start_s = np.concatenate([frames.times_s[:1], frames.times_s[:-1]])
        return SignalSeries(
            times_s=frames.times_s,
            step_start_s=step_start_s,
            frame_diff=rows[:, 0].copy(),
            changed_fraction=rows[:, 1].copy(),
            motion=rows[:, 2].copy(),
            shift_x=rows[:, 3].copy(),
            shift_y=rows[:, 4].copy(),
            sharpness=sharpness,
            brightness=frames.brightness,
            contrast=contrast,
        )


def compute_signals(frames: AnalysisFrames, step_start_s: np.ndarray | None = None) -> SignalSeries:
    """Every per-step signal in one pass over the frames, two at a time (a long clip's frames
    are never all in memory)."""
    meter = SignalMeter()
    for i in range(len(frames.thumbs)):
        meter.add(frames.thumbs[i])
    return meter.series(frames, step_start_s)


def distinct_steps(
    frames: AnalysisFrames, sig: SignalSeries, same_level: float
) -> tuple[AnalysisFrames, SignalSeries] | None:
    """The clip reduced to frames whose picture changed, or None when few frames repeat.

    Many published clips repeat each picture for a while (a 1 fps rollout padded to 10 or 24
    fps). Between repeats every change looks sudden, so motion must be judged between distinct
    pictures; ``step_start_s`` keeps the time of the last repeat before each change.
    """
    keep = np.flatnonzero(np.concatenate([[True], sig.frame_diff[1:] >= same_level]))
    if len(keep) < 2 or len(keep) > REPEAT_SHARE * len(sig.times_s):
        return None
    reduced = AnalysisFrames(
        times_s=frames.times_s[keep],
        thumbs=frames.thumbs[keep],
        sharpness=frames.sharpness[keep],
        brightness=frames.brightness[keep],
        contrast=frames.contrast[keep],
        steps=frames.steps,
    )
    starts = np.concatenate([[frames.times_s[0]], frames.times_s[keep[1:] - 1]])
    return reduced, compute_signals(reduced, step_start_s=starts)


EDGE_PERCENTILE = 99.7
"""``edge_strength`` reads the gradient at this percentile of a frame's pixels: its sharpest
edges, however little of the frame they cover."""


def edge_strength(thumb: np.ndarray) -> float:
    """How sharply the frame's sharpest edges step, in levels per pixel of the colour channel
    that steps most (Sobel / 4 at EDGE_PERCENTILE; a green thing as bright as the grey table
    under it has an edge too): what fog or a wash-out flattens and a plain but visible scene
    keeps."""
    picture = np.asarray(thumb, dtype=np.float32)
    gx = cv2.Sobel(picture, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(picture, cv2.CV_32F, 0, 1, ksize=3)
    steepest = np.hypot(gx, gy).max(axis=2)
    return float(np.percentile(steepest, EDGE_PERCENTILE)) / 4.0
