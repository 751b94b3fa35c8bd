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


def _jump(framed: bool) -> list[tuple[str, float, float]]:
    """A dark 12x12 thing jumping 40 px between two frames of a 10 fps clip; when ``framed``, a
    light 3 px outline around it (a part of the arm) jumps with it, as an arm does in a clip
    whose pictures change every fifth frame."""
    from gaze.pixels.evidence import detect
    from gaze.pixels.signals import compute_signals
    from tests.pixels.test_evidence import BACKGROUND, _frames

    rng = np.random.default_rng(7)
    pictures = []
    for k in range(16):
        x = 30 if k < 8 else 70
        base = BACKGROUND.copy()
        if framed:
            base[54:78, x - 6 : x + 18] = 200
            base[57:75, x - 3 : x + 15] = BACKGROUND[57:75, x - 3 : x + 15]
        base[60:72, x : x + 12] = 20
        noise = rng.integers(-2, 3, base.shape)
        pictures.append(np.clip(base.astype(int) + noise, 0, 255).astype(np.uint8))
    frames = _frames(pictures)
    return [(e.type, e.start_s, e.end_s) for e in detect(frames, compute_signals(frames))]


def test_a_jump_whose_both_halves_sit_amid_motion_is_the_arm_moving():
    """Alone, the jump is a teleport; amid as much change around both of its halves it is
    something moving in a large step (UniSim's long-horizon clip: without the rule, a "jump"
    along the arm was reported on an untouched real clip)."""
    assert _jump(framed=False) == [("object_teleportation", 0.7, 0.8)]
    assert _jump(framed=True) == []
