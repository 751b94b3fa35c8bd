"""Injected failures with exact ground truth.

Scene failures edit the world before rendering (an object jumps, vanishes, appears); frame failures
edit rendered frames (corruption, blur, darkness, shake). Each returns its reference event. An
instant change between frames k-1 and k is spanned [(k-1)/fps, k/fps]; a damaged run of frames
k..m is spanned [k/fps, m/fps].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from gaze.bench.forge.motion import Rollout, place_blocks
from gaze.bench.forge.scene import COLOURS, HEIGHT, WIDTH, Block
from gaze.bench.forge_common import reference_event

Frames = list[np.ndarray]
Busy = list[tuple[int, int]]


def _free_frame(
    rng: np.random.Generator, n: int, busy: Busy, length: int, ok: Callable[[int], bool]
) -> int:
    """A start frame in [1 s, end - 1 s] whose run of ``length`` frames avoids ``busy`` spans."""
    lo, hi = 10, n - 10 - length
    candidates = [
        k
        for k in range(lo, hi)
        if ok(k) and all(k + length + 5 <= s or k >= e + 5 for s, e in busy)
    ]
    if not candidates:
        raise ValueError("no free frames left for another injection")
    k = int(rng.choice(candidates))
    busy.append((k, k + length))
    return k


def _far_from_arm(roll: Rollout, block: Block, k: int) -> bool:
    return all(roll.gripper_distance(f, block.x, block.y) > 55 for f in range(k - 3, k + 4))


def teleportation(roll: Rollout, rng: np.random.Generator, busy: Busy) -> dict[str, Any]:
    idx = int(rng.choice(roll.distractors))
    block = roll.states[0].blocks[idx]
    k = _free_frame(rng, len(roll.states), busy, 1, lambda f: _far_from_arm(roll, block, f))
    taken = [b.x for b in roll.states[k].blocks] + [roll.states[k].plate_x]
    new_x = place_blocks(rng, 1, avoid=taken)[0].x
    for state in roll.states[k:]:
        state.blocks[idx].x = new_x
    return reference_event(
        "object_teleportation",
        k - 1,
        k,
        roll.fps,
        f"the {block.colour} block jumps from x={block.x:.0f} to x={new_x:.0f} px "
        "between two frames without being carried",
        f"forge: injected jump at frame {k}",
    )


def disappearance(roll: Rollout, rng: np.random.Generator, busy: Busy) -> dict[str, Any]:
    idx = int(rng.choice(roll.distractors))
    block = roll.states[0].blocks[idx]
    k = _free_frame(rng, len(roll.states), busy, 1, lambda f: _far_from_arm(roll, block, f))
    for state in roll.states[k:]:
        state.blocks[idx].visible = False
    return reference_event(
        "object_disappearance",
        k - 1,
        k,
        roll.fps,
        f"the {block.colour} block vanishes from the table with nothing covering it",
        f"forge: injected removal at frame {k}",
    )


def hallucination(roll: Rollout, rng: np.random.Generator, busy: Busy) -> dict[str, Any]:
    used = {b.colour for b in roll.states[0].blocks}
    colour = str(rng.choice([c for c in COLOURS if c not in used]))
    taken = [b.x for b in roll.states[0].blocks] + [roll.states[0].plate_x]
    block = place_blocks(rng, 1, avoid=taken)[0]
    block.colour = colour
    k = _free_frame(rng, len(roll.states), busy, 1, lambda f: _far_from_arm(roll, block, f))
    for state in roll.states[k:]:
        state.extra.append(Block(colour, block.x, block.y, block.size))
    return reference_event(
        "object_hallucination",
        k - 1,
        k,
        roll.fps,
        f"a {colour} block materialises on the table at x={block.x:.0f} px",
        f"forge: injected appearance at frame {k}",
    )


def frame_corruption(
    frames: Frames, fps: float, rng: np.random.Generator, busy: Busy
) -> dict[str, Any]:
    length = int(rng.integers(1, 3))
    k = _free_frame(rng, len(frames), busy, length, lambda f: True)
    for f in range(k, k + length):
        img = frames[f].copy()
        cell = 16
        for y in range(0, HEIGHT, cell):
            for x in range(0, WIDTH, cell):
                if rng.random() < 0.5:
                    img[y : y + cell, x : x + cell] = rng.integers(0, 256, 3)
        frames[f] = img
    return reference_event(
        "frame_corruption",
        k,
        k + length - 1,
        fps,
        "blocky codec-like corruption covers about half of the frame",
        f"forge: {length} corrupted frame(s) from frame {k}",
    )


def _span_length(rng: np.random.Generator, fps: float) -> int:
    return int(rng.integers(round(1.0 * fps), round(2.0 * fps) + 1))


def blur(frames: Frames, fps: float, rng: np.random.Generator, busy: Busy) -> dict[str, Any]:
    length = _span_length(rng, fps)
    k = _free_frame(rng, len(frames), busy, length, lambda f: True)
    for f in range(k, k + length):
        frames[f] = cv2.GaussianBlur(frames[f], (0, 0), 3.5)
    return reference_event(
        "blur",
        k,
        k + length - 1,
        fps,
        "the whole frame goes soft; edges cannot be made out",
        f"forge: gaussian blur sigma 3.5 on frames {k}-{k + length - 1}",
    )


def low_visibility(
    frames: Frames, fps: float, rng: np.random.Generator, busy: Busy
) -> dict[str, Any]:
    length = _span_length(rng, fps)
    k = _free_frame(rng, len(frames), busy, length, lambda f: True)
    for f in range(k, k + length):
        frames[f] = (frames[f].astype(np.float32) * 0.12).astype(np.uint8)
    return reference_event(
        "low_visibility",
        k,
        k + length - 1,
        fps,
        "the scene goes nearly black",
        f"forge: brightness x0.12 on frames {k}-{k + length - 1}",
    )


def camera_instability(
    frames: Frames, fps: float, rng: np.random.Generator, busy: Busy
) -> dict[str, Any]:
    length = _span_length(rng, fps)
    k = _free_frame(rng, len(frames), busy, length, lambda f: True)
    for f in range(k, k + length):
        dx, dy = rng.uniform(-9, 9, 2)
        matrix = np.array([[1, 0, dx], [0, 1, dy]], dtype=np.float32)
        frames[f] = cv2.warpAffine(
            frames[f], matrix, (WIDTH, HEIGHT), borderMode=cv2.BORDER_REPLICATE
        )
    return reference_event(
        "camera_instability",
        k,
        k + length - 1,
        fps,
        "the whole view shakes from frame to frame",
        f"forge: random shifts up to 9 px on frames {k}-{k + length - 1}",
    )


SCENE_FAILURES = {
    "object_teleportation": teleportation,
    "object_disappearance": disappearance,
    "object_hallucination": hallucination,
}
FRAME_FAILURES = {
    "frame_corruption": frame_corruption,
    "blur": blur,
    "low_visibility": low_visibility,
    "camera_instability": camera_instability,
}
FAILURE_TYPES: tuple[str, ...] = (*SCENE_FAILURES, *FRAME_FAILURES)
