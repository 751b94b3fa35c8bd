"""Injections composited onto a user's footage beyond forge v2's frame-level ones: a drawn object
that appears, vanishes or jumps (forge v2's object drawing, placed where the footage is still),
camera shake as an image-space jitter, and a stretch of duplicated frames (a stutter)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import cv2
import numpy as np

from gaze.bench.forge2.frames import window
from gaze.bench.forge2.world import PALETTE, SHAPES, Thing, draw_thing
from gaze.bench.probe.canvas import FootageCanvas

SPOT_TRIES = 12
"""Candidate places an object is tried at; the stillest wins (a change under a moving arm is
motion, not a probe)."""


def _thing(canvas: FootageCanvas, name: str) -> Thing:
    width, height = canvas.size
    # a share of the picture's area, whatever its shape: on a 960 x 192 side-by-side clip a
    # tenth of the short side is a few thumbnail pixels, which no detector could be asked to see
    size = float(canvas.rng.uniform(0.07, 0.11)) * (width * height) ** 0.5
    colour = str(canvas.rng.choice(list(PALETTE)))
    shape = str(canvas.rng.choice(SHAPES))
    return Thing(name=name, colour=colour, shape=shape, x=0.0, y=0.0, size=size)


def _still_spot(canvas: FootageCanvas, thing: Thing, k: int) -> Thing:
    """``thing`` moved to the place, of ``SPOT_TRIES`` random ones, whose pixels change least
    around frame k (the thing is wholly inside the frame, away from its edges)."""
    width, height = canvas.size
    frames = canvas.footage.frames
    span = range(max(1, k - 3), min(len(frames), k + 4))
    best, best_change = thing, float("inf")
    for _ in range(SPOT_TRIES):
        x = float(canvas.rng.uniform(0.15, 0.85)) * width
        y = float(canvas.rng.uniform(0.25, 0.85)) * height
        placed = replace(thing, x=x, y=y)
        x0, y0, x1, y1 = (max(0, round(v)) for v in placed.box())
        change = float(
            np.mean(
                [
                    cv2.absdiff(frames[f][y0:y1, x0:x1], frames[f - 1][y0:y1, x0:x1]).mean()
                    for f in span
                ]
            )
        )
        if change < best_change:
            best, best_change = placed, change
    return best


def _region(canvas: FootageCanvas, thing: Thing, f: int, label: str) -> dict[str, Any]:
    width, height = canvas.size
    x0, y0, x1, y1 = thing.box()
    box = [
        round(min(max(x0 / width, 0.0), 1.0), 4),
        round(min(max(y0 / height, 0.0), 1.0), 4),
        round(min(max(x1 / width, 0.0), 1.0), 4),
        round(min(max(y1 / height, 0.0), 1.0), 4),
    ]
    return {"t_s": round(f / canvas.fps, 6), "box": box, "label": label}


def _draw(canvas: FootageCanvas, frames_of: range, thing: Thing) -> None:
    def edit(frames: list[np.ndarray]) -> None:
        for f in frames_of:
            img = frames[f].copy()
            draw_thing(img, thing)
            frames[f] = img

    canvas.frame_edits.append(edit)


def appear(canvas: FootageCanvas) -> dict[str, Any]:
    """A drawn object is there from frame k on, and not before."""
    k = window(canvas, 1, lambda f: True)
    thing = _still_spot(canvas, _thing(canvas, "probe object"), k)
    _draw(canvas, range(k, canvas.n), thing)
    what = f"a {thing.colour} {thing.shape} appears from nothing"
    return canvas.event(
        "object_hallucination", "appear", k, k, what, [_region(canvas, thing, k, "appears")]
    )


def vanish(canvas: FootageCanvas) -> dict[str, Any]:
    """A drawn object is there from the first frame and gone from frame k."""
    k = window(canvas, 1, lambda f: True)
    thing = _still_spot(canvas, _thing(canvas, "probe object"), k)
    _draw(canvas, range(0, k), thing)
    what = f"the {thing.colour} {thing.shape} vanishes in place"
    return canvas.event(
        "object_disappearance", "vanish", k, k, what, [_region(canvas, thing, k - 1, "before")]
    )


def jump(canvas: FootageCanvas) -> dict[str, Any]:
    """A drawn object stands in one place until frame k, in another from frame k."""
    k = window(canvas, 1, lambda f: True)
    thing = _thing(canvas, "probe object")
    before = _still_spot(canvas, thing, k)
    after = before
    for _ in range(SPOT_TRIES):  # far enough that the two places do not overlap
        after = _still_spot(canvas, thing, k)
        if abs(after.x - before.x) + abs(after.y - before.y) > 2 * thing.size:
            break
    _draw(canvas, range(0, k), before)
    _draw(canvas, range(k, canvas.n), after)
    regions = [_region(canvas, before, k - 1, "before"), _region(canvas, after, k, "after")]
    what = f"the {thing.colour} {thing.shape} jumps across the scene between two frames"
    return canvas.event("object_teleportation", "jump", k, k, what, regions)


def shake(canvas: FootageCanvas) -> dict[str, Any]:
    """The whole picture jitters (1.5-3 % of its width, a little rotation) for 0.7-2 s."""
    length = round(float(canvas.rng.uniform(0.7, 2.0)) * canvas.fps)
    k = window(canvas, length, lambda f: True)
    width, height = canvas.size
    amplitude = float(canvas.rng.uniform(0.015, 0.03)) * width
    moves = [
        (
            *(float(v) for v in canvas.rng.uniform(-amplitude, amplitude, 2)),
            float(canvas.rng.uniform(-1, 1)),
        )
        for _ in range(length)
    ]

    def edit(frames: list[np.ndarray]) -> None:
        for f, (dx, dy, angle) in zip(range(k, k + length), moves, strict=True):
            matrix = cv2.getRotationMatrix2D((width / 2, height / 2), angle, 1.0)
            matrix[:, 2] += np.array([dx, dy])
            frames[f] = cv2.warpAffine(
                frames[f], matrix, (width, height), borderMode=cv2.BORDER_REFLECT
            )

    canvas.frame_edits.append(edit)
    return canvas.event(
        "camera_instability",
        "shake",
        k,
        k + length - 1,
        "the whole view shakes from frame to frame",
    )


def stutter(canvas: FootageCanvas) -> dict[str, Any]:
    """For 1-2 s (at least six frames) every other frame repeats the one before, the next one
    skipped: the motion stutters at half its rate while the clip keeps its length."""
    # at least three repeats, whatever the rate: two can be a robot's brief hesitation twice
    length = 2 * max(3, round(float(canvas.rng.uniform(0.5, 1.0)) * canvas.fps))
    # no frame repeats and the picture moves: over footage that already repeats its pictures
    # (content at a low rate padded to the file's) a stutter shows nothing, and no method could
    # be asked to see it
    k = window(canvas, length, lambda f: canvas.flowing(f, f + length + 1))

    def edit(frames: list[np.ndarray]) -> None:
        for f in range(k + 1, k + length, 2):
            frames[f] = frames[f - 1]

    canvas.frame_edits.append(edit)
    return canvas.event(
        "frame_corruption",
        "stutter",
        k,
        k + length - 1,
        "frames are duplicated: the motion stutters at half its rate",
    )
