"""Every decoded frame, cheaply: grey differences to the previous few frames.

Heavy analysis runs on thumbnails at a capped rate (``gaze.video.signals``), which never looks at
two frames in three of a 30 fps clip. A one-frame glitch hides there, and the exact frame of a
sudden change is lost. So each decoded frame is also sampled on a coarse grid (every
``step``-th pixel, about SAMPLE_SIDE across; no filtering, so sensor noise is kept and a repeated
picture stands out from a still scene) and compared with the frames 1..LAG before it. Only the
differences are kept: memory is a few floats per frame.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

import cv2
import numpy as np

import gaze  # noqa: F401  (quiets OpenCV logging before cv2 is imported)

SAMPLE_SIDE = 160
"""Samples across the longer side of a frame."""
LAG = 4
"""Differences are kept to the 1..LAG previous frames (a glitch of up to LAG-1 frames)."""


@dataclass
class FrameSteps:
    """Per decoded frame k: its time and its grey difference to frames k-1..k-LAG."""

    times_s: np.ndarray
    diff: np.ndarray
    """(N, LAG): diff[k, j] = mean |grey_k - grey_(k-1-j)| on the sample grid, 0-255; NaN where
    frame k-1-j does not exist."""


class StepMeter:
    """Fed every decoded frame in order; ``result()`` gives the FrameSteps."""

    def __init__(self) -> None:
        self._recent: deque[np.ndarray] = deque(maxlen=LAG)
        self._times: list[float] = []
        self._diffs: list[list[float]] = []
        self._step = 0

    def add(self, t: float, frame: np.ndarray) -> None:
        if not self._step:
            self._step = max(1, max(frame.shape[:2]) // SAMPLE_SIDE)
        s = self._step
        sample = np.ascontiguousarray(frame[::s, ::s])
        grey = cv2.cvtColor(sample, cv2.COLOR_BGR2GRAY) if sample.ndim == 3 else sample
        if self._recent and grey.shape != self._recent[-1].shape:  # a stream that changes size
            grey = cv2.resize(grey, self._recent[-1].shape[::-1])
        row = [float(cv2.mean(cv2.absdiff(grey, old))[0]) for old in reversed(self._recent)]
        self._diffs.append(row + [float("nan")] * (LAG - len(row)))
        self._recent.append(grey)
        self._times.append(t)

    def result(self) -> FrameSteps:
        return FrameSteps(
            times_s=np.asarray(self._times, dtype=np.float64),
            diff=np.asarray(self._diffs, dtype=np.float64).reshape(-1, LAG),
        )


def measure_steps(frames: Iterable[np.ndarray], times_s: Iterable[float]) -> FrameSteps:
    """FrameSteps of frames already in hand (decoding feeds a StepMeter as it goes)."""
    meter = StepMeter()
    for t, frame in zip(times_s, frames, strict=True):
        meter.add(float(t), frame)
    return meter.result()
