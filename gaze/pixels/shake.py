"""Which analysis frames shake (pure): camera shifts that go back and forth, or back and forth
about the camera's smooth path when it pans or zooms (``gaze.pixels.evidence`` makes the events).

``shift[i]`` is the camera's translation (median optical flow, thumbnail pixels) from analysis
frame i-1 to i.
"""

from __future__ import annotations

import numpy as np

from gaze.pixels.runs import true_runs

SHAKE_SHIFT_PX = 1.5
"""Per-frame camera translation (median optical flow, thumbnail px) that counts as a shift."""
SHAKE_WINDOW = 5
"""Frames looked at together when deciding whether the camera shakes."""
SHAKE_MIN_FRAMES = 3
"""Shifted frames needed inside a window."""
SHAKE_JITTER_RATIO = 0.5
"""|sum of shifts| / sum of |shifts| below this means back-and-forth shaking, not a pan."""
SHAKE_KEEP_SHARE = 0.5
"""Shaking, once found, goes on through windows that shake by this share of SHAKE_SHIFT_PX
(hysteresis: strong evidence to start an episode, weaker to follow it to its ends)."""
SHAKE_GAP_FRAMES = 2
"""Shaking runs separated by at most this many quiet frames are one episode."""
SHAKE_REVERSALS = 2
"""Direction reversals between consecutive shifts needed inside a window: shaking goes back and
forth; a smooth pan that slows and turns (pan-and-return) reverses once."""


def _reversals(steps: np.ndarray) -> bool:
    """Whether consecutive shifts turn back often enough to be shaking."""
    return int((np.sum(steps[1:] * steps[:-1], axis=1) < 0).sum()) >= SHAKE_REVERSALS


def _both_ways(jitter: np.ndarray) -> bool:
    """Whether departures from the path turn back often and go at least twice to each side."""
    along = jitter @ jitter[int(np.argmax(np.linalg.norm(jitter, axis=1)))]
    return _reversals(jitter) and (along > 0).sum() >= 2 and (along < 0).sum() >= 2


def _shaken(shift: np.ndarray, px: float) -> np.ndarray:
    """Analysis frames that shake: in some window of SHAKE_WINDOW frames, shifted by more than
    ``px`` back and forth (or about the window's smooth path, for shaking on a pan or zoom);
    short quiet gaps bridged (a shaken frame may land near its predecessor's position)."""
    size = np.linalg.norm(shift, axis=1)
    shaking = np.zeros(len(size), dtype=bool)
    for i in range(len(size) - SHAKE_WINDOW + 1):
        win = slice(i, i + SHAKE_WINDOW)
        moved = size[win] > px
        if moved.sum() >= SHAKE_MIN_FRAMES:
            net = float(np.linalg.norm(shift[win].sum(axis=0)))
            if net / float(size[win].sum()) < SHAKE_JITTER_RATIO and _reversals(shift[win][moved]):
                shaking[win] |= moved
                continue
        # shaking on top of a pan or zoom: what departs from the window's smooth path, to both
        # sides (one jump, such as a frozen pan catching up, departs to one side only)
        jitter = shift[win] - shift[win].mean(axis=0)
        off_path = np.linalg.norm(jitter, axis=1) > px
        if off_path.sum() >= SHAKE_MIN_FRAMES and _both_ways(jitter[off_path]):
            shaking[win] |= off_path
    for (_, e1), (s2, _) in zip(true_runs(shaking), true_runs(shaking)[1:], strict=False):
        if s2 - e1 - 1 <= SHAKE_GAP_FRAMES:
            shaking[e1:s2] = True
    return shaking


def shaking_frames(shift: np.ndarray) -> np.ndarray:
    """(N,) mask of shaking analysis frames for (N, 2) shifts: episodes start where frames shift
    by more than SHAKE_SHIFT_PX and are followed to their ends through frames that pass the same
    tests at SHAKE_KEEP_SHARE of it (a small or square picture shakes by fewer thumbnail
    pixels)."""
    shaking = _shaken(shift, SHAKE_SHIFT_PX)
    weak = _shaken(shift, SHAKE_SHIFT_PX * SHAKE_KEEP_SHARE)
    for s, e in true_runs(weak):
        if shaking[s : e + 1].any():
            shaking[s : e + 1] = True
    return shaking
