"""A thing that leaves its place amid as much change right around it in the same step (a gripper
carrying it away) is not reported as vanished; alone on a still spot it is."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from gaze.pixels.change_regions import ChangeSteps, changed_regions
from gaze.pixels.local_change import CARRIED_BESIDE

GREY, DARK = 120, 20


def thumbs(carried: bool) -> np.ndarray:
    """Five 64x64 frames: a dark 6x6 thing at (30, 20) gone from frame 2 on; when ``carried``,
    a dark 14x14 block (the gripper) arrives 3 px to its right in that same step."""
    frames = np.full((5, 64, 64, 3), GREY, np.uint8)
    frames[:2, 20:26, 30:36] = DARK
    if carried:
        frames[2:, 16:30, 39:53] = DARK
    return frames


def _the_thing(carried: bool):
    steps = ChangeSteps(SimpleNamespace(thumbs=thumbs(carried)))
    regions = changed_regions(steps, 2)
    (thing,) = [r for r in regions if r.box[0] < 0.6 and r.before > r.after]
    return thing


def test_a_thing_gone_amid_a_moving_gripper_counts_as_carried():
    alone, carried = _the_thing(carried=False), _the_thing(carried=True)
    assert alone.beside <= CARRIED_BESIDE < carried.beside
    assert alone.beside == 0.0
