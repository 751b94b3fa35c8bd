"""Every decoded frame, cheaply: grey differences to the previous few frames.

Heavy analysis runs on thumbnails at a capped rate (``gaze.pixels.signals``), which never looks at
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

SAMPLE_SIDE = 160
"""Samples across the longer side of a frame."""
LAG = 4
"""Differences are kept to the 1..LAG previous frames (a glitch of up to LAG-1 frames)."""
CELLS = 8
"""The step to the previous frame is also kept on a CELLS x CELLS grid, so the exact frame of a
local change (an object vanishing between two analysis frames) can be told."""


@dataclass
class FrameSteps:
    """Per decoded frame k: its time and its grey difference to frames k-1..k-LAG."""

    times_s: np.ndarray
    diff: np.ndarray
    """(N, LAG): diff[k, j] = mean |grey_k - grey_(k-1-j)| on the sample grid, 0-255; NaN where
    frame k-1-j does not exist."""
    cells: np.ndarray | None = None
    """(N, CELLS, CELLS): mean |grey_k - grey_(k-1)| in each cell of the frame (rows top to
    bottom); 0 for the first frame."""

    def local_step(self, k: int, box: tuple[float, float, float, float]) -> float:
        """Mean step to the previous frame over the cells a normalised box touches."""
        if self.cells is None:
            return float("nan")
        return float(self.cells[(k, *cells_touched(box))].mean())

    def step_elsewhere(self, k: int, boxes: list[tuple[float, float, float, float]]) -> float:
        """The largest step to the previous frame in a cell that none of ``boxes`` touches (0
        when they touch every cell)."""
        if self.cells is None:
            return float("nan")
        outside = np.ones((CELLS, CELLS), dtype=bool)
        for box in boxes:
            outside[cells_touched(box)] = False
        return float(self.cells[k][outside].max(initial=0.0))


def cells_touched(box: tuple[float, float, float, float]) -> tuple[slice, slice]:
    """(rows, columns) of the CELLS x CELLS grid that a normalised box touches (at least one)."""
    x0, y0, x1, y1 = box
    c0, c1 = int(x0 * CELLS), min(int(np.ceil(x1 * CELLS)), CELLS)
    r0, r1 = int(y0 * CELLS), min(int(np.ceil(y1 * CELLS)), CELLS)
    return slice(r0, max(r1, r0 + 1)), slice(c0, max(c1, c0 + 1))


class StepMeter:
    """Fed every decoded frame in order; ``result()`` gives the FrameSteps."""

    def __init__(self) -> None:
        self._recent: deque[np.ndarray] = deque(maxlen=LAG)
        self._times: list[float] = []
        self._diffs: list[list[float]] = []
        self._cells: list[np.ndarray] = []
        self._step = 0

    def step_for(self, width: int, height: int) -> int:
        """The sampling step for frames of this size (fixed by the first frame)."""
        if not self._step:
            self._step = max(1, max(width, height) // SAMPLE_SIDE)
        return self._step

    def add(self, t: float, frame: np.ndarray) -> None:
        """Add a whole frame (BGR or grey)."""
        s = self.step_for(frame.shape[1], frame.shape[0])
        sample = np.ascontiguousarray(frame[::s, ::s])
        grey = cv2.cvtColor(sample, cv2.COLOR_BGR2GRAY) if sample.ndim == 3 else sample
        self.add_sample(t, grey)

    def add_sample(self, t: float, grey: np.ndarray) -> None:
        """Add a frame's grey levels already sampled every ``step_for(...)`` pixels."""
        if self._recent and grey.shape != self._recent[-1].shape:  # a stream that changes size
            grey = cv2.resize(grey, self._recent[-1].shape[::-1])
        steps = [cv2.absdiff(grey, old) for old in reversed(self._recent)]
        row = [float(cv2.mean(step)[0]) for step in steps]
        self._diffs.append(row + [float("nan")] * (LAG - len(row)))
        self._cells.append(
            cv2.resize(steps[0].astype(np.float32), (CELLS, CELLS), interpolation=cv2.INTER_AREA)
            if steps
            else np.zeros((CELLS, CELLS), np.float32)
        )
        self._recent.append(grey)
        self._times.append(t)

    def result(self) -> FrameSteps:
        return FrameSteps(
            times_s=np.asarray(self._times, dtype=np.float64),
            diff=np.asarray(self._diffs, dtype=np.float64).reshape(-1, LAG),
            cells=np.asarray(self._cells, dtype=np.float32).reshape(-1, CELLS, CELLS),
        )


def measure_steps(frames: Iterable[np.ndarray], times_s: Iterable[float]) -> FrameSteps:
    """FrameSteps of frames already in hand (decoding feeds a StepMeter as it goes)."""
    meter = StepMeter()
    for t, frame in zip(times_s, frames, strict=True):
        meter.add(float(t), frame)
    return meter.result()


SHARP_RATIO = 1.5
"""A local change is put on one decoded frame when that frame's step over the changed area is at
least this many times the next largest step between the two analysis frames."""


def exact_frame(
    steps: FrameSteps | None,
    after_s: float,
    until_s: float,
    boxes: list[tuple[float, float, float, float]],
) -> int | None:
    """The decoded frame in (after_s, until_s] whose step from the frame before it is largest
    over the boxed area, when it clearly stands out; None when it does not (or cannot be told)."""
    if steps is None or steps.cells is None or not boxes:
        return None
    times = steps.times_s
    candidates = np.flatnonzero((times > after_s + 1e-6) & (times <= until_s + 1e-6))
    candidates = candidates[candidates >= 1]
    if candidates.size == 0:
        return None
    if candidates.size == 1:
        return int(candidates[0])
    scores = np.array([max(steps.local_step(int(k), b) for b in boxes) for k in candidates])
    order = np.argsort(scores)[::-1]
    if not scores[order[0]] >= SHARP_RATIO * scores[order[1]]:
        return None
    return int(candidates[order[0]])


EDGE_STEP = 2.0
"""A decoded frame just outside a span found on analysis frames belongs to it when its
every-frame step is at least this many times the clip's typical step."""


def widened_to_frames(
    steps: FrameSteps | None, start_s: float, end_s: float, reach_s: float, typical: float
) -> tuple[float, float]:
    """A span of jumpy frames (a shake) found on analysis frames, widened to the decoded frames
    between analysis frames (up to ``reach_s`` either side) that jump as much: the first and
    last displaced frames of a shake are seldom analysis frames. ``typical`` is the clip's
    typical every-frame step."""
    if steps is None or len(steps.times_s) < 3:
        return start_s, end_s
    times, d1 = steps.times_s, steps.diff[:, 0]
    first = int(np.searchsorted(times, start_s - 1e-6))
    last = int(np.searchsorted(times, end_s + 1e-6)) - 1
    if not 0 <= first <= last < len(times):
        return start_s, end_s
    lo, hi = first, last
    # frame lo-1 is displaced when the step into it is a jump (d1[k] is the step into frame k)
    while lo >= 2 and times[first] - times[lo - 1] <= reach_s + 1e-6:
        if not d1[lo - 1] >= EDGE_STEP * typical:
            break
        lo -= 1
    # frame hi+1 is still displaced when the step out of it is a jump
    while hi + 2 < len(times) and times[hi + 1] - times[last] <= reach_s + 1e-6:
        if not d1[hi + 2] >= EDGE_STEP * typical:
            break
        hi += 1
    return float(times[lo]), float(times[hi])
