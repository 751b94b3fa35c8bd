"""The scripted pick-and-place: per-frame scene states for one clean rollout."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from gaze.bench.forge.scene import COLOURS, HOME, TABLE_Y, Block, SceneState

FINGER_LENGTH = 14
OPEN = 16.0
MIN_GAP = 40
# Six places along the table, 48 px apart: room for the plate, three blocks and two more
# (a hallucinated block, a teleport destination) without overlaps.
SLOTS = (40.0, 88.0, 136.0, 184.0, 232.0, 280.0)
PLATE_SURFACE = TABLE_Y + 28


@dataclass
class Rollout:
    """A clean rollout and what the injections need to know about it."""

    states: list[SceneState]
    fps: float
    target: int  # index of the block that is picked
    distractors: list[int]
    instruction: str

    def gripper_distance(self, frame: int, x: float, y: float) -> float:
        gx, gy = self.states[frame].gripper
        return float(np.hypot(gx - x, gy + FINGER_LENGTH - y))


def _smooth(u: float) -> float:
    return u * u * (3 - 2 * u)


def _interpolate(keys: list[tuple[float, float, float, float]], t: float) -> tuple[float, ...]:
    """Keyframes (time, x, y, opening) -> pose at time t, smoothstep between keys."""
    for (t0, *a), (t1, *b) in zip(keys, keys[1:], strict=False):
        if t0 <= t <= t1:
            u = _smooth((t - t0) / (t1 - t0)) if t1 > t0 else 1.0
            return tuple(p + (q - p) * u for p, q in zip(a, b, strict=True))
    return tuple(keys[-1][1:])


def place_blocks(rng: np.random.Generator, count: int, avoid: list[float]) -> list[Block]:
    """``count`` blocks at free table positions (>= MIN_GAP px from each other and ``avoid``)."""
    colours = list(rng.permutation(list(COLOURS)))
    blocks: list[Block] = []
    taken = list(avoid)
    for _ in range(count):
        free = [x for x in SLOTS if all(abs(x - o) >= MIN_GAP for o in taken)]
        if not free:
            raise ValueError("no free place on the table")
        x = float(rng.choice(free)) + float(rng.uniform(-3, 3))
        taken.append(x)
        size = int(rng.integers(16, 23))
        y = float(TABLE_Y + rng.integers(12, 36))
        blocks.append(Block(colour=str(colours[len(blocks)]), x=x, y=y, size=size))
    return blocks


def pick_and_place(rng: np.random.Generator, fps: float = 10.0, duration_s: float = 8.0) -> Rollout:
    plate_x = float(rng.choice([SLOTS[1], SLOTS[4]]))
    blocks = place_blocks(rng, int(rng.integers(2, 4)), avoid=[plate_x])
    target = int(np.argmax([abs(b.x - plate_x) for b in blocks]))
    b = blocks[target]
    grasp_y = b.y - FINGER_LENGTH
    hold = b.size / 2 + 2
    place_y = PLATE_SURFACE - FINGER_LENGTH
    keys = [
        (0.0, *HOME, OPEN),
        (1.2, b.x, TABLE_Y - 60, OPEN),
        (2.0, b.x, grasp_y, OPEN),
        (2.5, b.x, grasp_y, hold),
        (3.3, b.x, TABLE_Y - 60, hold),
        (4.8, plate_x, TABLE_Y - 50, hold),
        (5.5, plate_x, place_y, hold),
        (5.9, plate_x, place_y, OPEN),
        (6.6, plate_x, TABLE_Y - 60, OPEN),
        (duration_s - 0.1, *HOME, OPEN),
    ]
    states = []
    for i in range(round(duration_s * fps)):
        t = i / fps
        gx, gy, opening = _interpolate(keys, t)
        current = copy.deepcopy(blocks)
        held = target if 2.5 <= t < 5.9 else None
        if held is not None or t >= 5.9:
            current[target].x = gx
            current[target].y = gy + FINGER_LENGTH
        states.append(SceneState(current, plate_x, (gx, gy), opening, held))
    distractors = [i for i in range(len(blocks)) if i != target]
    instruction = f"put the {b.colour} block on the plate"
    return Rollout(states, fps, target, distractors, instruction)
