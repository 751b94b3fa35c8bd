"""Forge v2's injected failures, with exact truth: spans at frame instants, and for scene
failures the boxes (normalised output coordinates) of the thing before and after.

An instant change between frames k-1 and k is spanned [(k-1)/fps, k/fps]; a damaged run of
frames k..m is spanned [k/fps, m/fps]; a freeze whose frames k..m repeat frame k-1 is spanned
[(k-1)/fps, m/fps].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

from gaze.bench.forge2.camera import to_output, world_to_output
from gaze.bench.forge2.script import Rollout, free_spot
from gaze.bench.forge2.world import SHAPES, Thing
from gaze.bench.forge_common import elbow_of, reference_event

Busy = list[tuple[int, int]]
Shake = dict[int, tuple[float, float, float]]
Point = tuple[float, float]
FrameEdit = Callable[[list[np.ndarray], int, int], None]
"""Changes frame f of an injection that starts at frame k, in place."""


@dataclass
class Plan:
    """Everything a clip's injections decided before the frames are shot."""

    roll: Rollout
    size: tuple[int, int]
    rng: np.random.Generator
    busy: Busy = field(default_factory=list)
    shake: Shake = field(default_factory=dict)
    frame_edits: list[Callable[[list[np.ndarray]], None]] = field(default_factory=list)

    def matrix(self, k: int) -> np.ndarray:
        return world_to_output(self.roll.cameras[k], self.size, self.shake.get(k, (0, 0, 0)))


def _event(
    plan: Plan,
    ftype: str,
    kind: str,
    start: int,
    end: int,
    description: str,
    regions: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """Forge v1's reference event, with v2's kind in the evidence and the regions."""
    event = reference_event(ftype, start, end, plan.roll.fps, description, f"forge v2: {kind}")
    return {**event, "regions": list(regions)}


def _window(plan: Plan, length: int, ok: Callable[[int], bool], margin_s: float = 1.0) -> int:
    """A first frame for a run of ``length`` frames, clear of other injections and clip ends."""
    fps, n = plan.roll.fps, plan.roll.n
    lo, hi = round(margin_s * fps), n - round(margin_s * fps) - length
    gap = round(0.6 * fps)
    candidates = [
        k
        for k in range(lo, hi)
        if all(k + length + gap <= s or k >= e + gap for s, e in plan.busy) and ok(k)
    ]
    if not candidates:
        raise ValueError("no free frames left for another injection")
    k = int(plan.rng.choice(candidates))
    plan.busy.append((k, k + length))
    return k


def _segment_distance(point: Point, start: Point, end: Point) -> float:
    p, a, b = (np.asarray(v, float) for v in (point, start, end))
    ab = b - a
    u = float(np.clip(np.dot(p - a, ab) / max(float(np.dot(ab, ab)), 1e-9), 0, 1))
    return float(np.linalg.norm(p - (a + u * ab)))


def _clear_of_arm(plan: Plan, point: tuple[float, float], k: int, reach: int) -> bool:
    for f in range(max(0, k - reach), min(plan.roll.n, k + reach + 1)):
        arm = plan.roll.states[f].arm
        elbow = elbow_of(arm.base, arm.gripper, arm.links)
        if (
            min(
                _segment_distance(point, arm.base, elbow),
                _segment_distance(point, elbow, arm.gripper),
            )
            < 95
        ):
            return False
    return True


def box_in_view(plan: Plan, thing: Thing, k: int) -> tuple[float, float, float, float] | None:
    """The thing's box at frame k, normalised to the output frame; None unless well inside it."""
    width, height = plan.size
    m = plan.matrix(k)
    x0, y0, x1, y1 = thing.box()
    corners = [to_output(p, m) for p in ((x0, y0), (x1, y0), (x0, y1), (x1, y1))]
    xs, ys = [c[0] / width for c in corners], [c[1] / height for c in corners]
    box = (min(xs), min(ys), max(xs), max(ys))
    inside = box[0] > 0.04 and box[1] > 0.04 and box[2] < 0.96 and box[3] < 0.96
    return tuple(round(v, 4) for v in box) if inside else None  # type: ignore[return-value]


def _region(plan: Plan, thing: Thing, k: int, label: str) -> dict[str, Any]:
    box = box_in_view(plan, thing, k)
    assert box is not None
    return {"t_s": round(k / plan.roll.fps, 6), "box": list(box), "label": label}


def _untouched(plan: Plan) -> list[int]:
    touched = set().union(*plan.roll.touched)
    return [i for i, t in enumerate(plan.roll.states[0].things) if t.name not in touched]


def _thing_ok(plan: Plan, idx: int) -> Callable[[int], bool]:
    def ok(k: int) -> bool:
        thing = plan.roll.states[k].things[idx]
        return all(box_in_view(plan, thing, f) for f in (k - 2, k, k + 2)) and _clear_of_arm(
            plan, (thing.x, thing.y), k, 4
        )

    return ok


def _new_spot(plan: Plan, k: int) -> tuple[float, float]:
    state = plan.roll.states[k]
    avoid = [plan.roll.states[f].arm.gripper for f in range(max(0, k - 6), min(plan.roll.n, k + 7))]
    camera = plan.roll.cameras[k]
    return free_spot(plan.rng, [*state.things, *state.extra], avoid, camera)


def teleportation(plan: Plan) -> dict[str, Any]:
    idx = int(plan.rng.choice(_untouched(plan)))
    k = _window(plan, 1, _thing_ok(plan, idx))
    before = replace(plan.roll.states[k].things[idx])
    x, y = _new_spot(plan, k)
    for state in plan.roll.states[k:]:
        state.things[idx].x, state.things[idx].y = x, y
    after = plan.roll.states[k].things[idx]
    if box_in_view(plan, after, k) is None or not _clear_of_arm(plan, (x, y), k, 4):
        raise ValueError("teleport destination left the view")
    return _event(
        plan,
        "object_teleportation",
        "teleportation",
        k - 1,
        k,
        f"the {before.colour} {before.shape} jumps to another place between two frames",
        [_region(plan, before, k - 1, "before"), _region(plan, after, k, "after")],
    )


def disappearance(plan: Plan) -> dict[str, Any]:
    idx = int(plan.rng.choice(_untouched(plan)))
    k = _window(plan, 1, _thing_ok(plan, idx))
    thing = replace(plan.roll.states[k].things[idx])
    for state in plan.roll.states[k:]:
        state.things[idx].visible = False
    return _event(
        plan,
        "object_disappearance",
        "disappearance",
        k - 1,
        k,
        f"the {thing.colour} {thing.shape} vanishes with nothing covering it",
        [_region(plan, thing, k - 1, "before")],
    )


def _appear(
    plan: Plan, make: Callable[[float, float], Thing], kind: str, what: str
) -> dict[str, Any]:
    def ok(k: int) -> bool:
        try:
            free_spot(
                np.random.default_rng(k), [*plan.roll.states[k].things], [], plan.roll.cameras[k]
            )
        except ValueError:
            return False
        return True

    k = _window(plan, 1, ok)
    x, y = _new_spot(plan, k)
    thing = make(x, y)
    for f in (k, k + 2, min(plan.roll.n - 1, k + 4)):
        if box_in_view(plan, thing, f) is None or not _clear_of_arm(plan, (x, y), f, 2):
            raise ValueError("the new thing is not clearly in view")
    for state in plan.roll.states[k:]:
        state.extra.append(replace(thing))
    return _event(
        plan, "object_hallucination", kind, k - 1, k, what, [_region(plan, thing, k, "after")]
    )


def hallucination(plan: Plan) -> dict[str, Any]:
    used = {t.colour for t in plan.roll.states[0].things}
    colour = str(plan.rng.choice([c for c in plan.roll.palette if c not in used]))
    shape, size = str(plan.rng.choice(SHAPES)), float(plan.rng.uniform(28, 44))
    return _appear(
        plan,
        lambda x, y: Thing("new", colour, shape, x, y, size),
        "hallucination",
        f"a {colour} {shape} materialises on the table",
    )


def duplicate(plan: Plan) -> dict[str, Any]:
    source = plan.roll.states[0].things[int(plan.rng.integers(len(plan.roll.states[0].things)))]
    return _appear(
        plan,
        lambda x, y: replace(source, name="copy", x=x, y=y),
        "duplicate",
        f"a second {source.colour} {source.shape}, a copy of one already there, appears",
    )


def _shake(plan: Plan) -> dict[str, Any]:
    fps = plan.roll.fps
    length = round(float(plan.rng.uniform(0.7, 2.0)) * fps)
    k = _window(plan, length, lambda f: True)
    amplitude = float(plan.rng.uniform(0.015, 0.03)) * plan.size[0]
    for f in range(k, k + length):
        dx, dy = plan.rng.uniform(-amplitude, amplitude, 2)
        plan.shake[f] = (float(dx), float(dy), float(plan.rng.uniform(-1.0, 1.0)))
    return _event(
        plan,
        "camera_instability",
        "shake",
        k,
        k + length - 1,
        "the whole view shakes from frame to frame",
    )


def _frames_edit(plan: Plan, length: int, ok: Callable[[int], bool], edit: FrameEdit) -> int:
    k = _window(plan, length, ok)

    def apply(frames: list[np.ndarray]) -> None:
        for f in range(k, k + length):
            edit(frames, f, k)

    plan.frame_edits.append(apply)
    return k


def corruption(plan: Plan) -> dict[str, Any]:
    length = int(plan.rng.integers(1, 3))
    rng = np.random.default_rng(int(plan.rng.integers(1 << 31)))
    cell = max(8, plan.size[0] // 20)

    def edit(frames: list[np.ndarray], f: int, k: int) -> None:
        img = frames[f].copy()
        for y in range(0, img.shape[0], cell):
            for x in range(0, img.shape[1], cell):
                if rng.random() < 0.5:
                    img[y : y + cell, x : x + cell] = rng.integers(0, 256, 3)
        frames[f] = img

    k = _frames_edit(plan, length, lambda f: True, edit)
    return _event(
        plan,
        "frame_corruption",
        "corruption",
        k,
        k + length - 1,
        "blocky codec-like corruption covers about half of the frame",
    )


def glitch(plan: Plan) -> dict[str, Any]:
    """One frame gone wrong: a flat green frame, a frame from elsewhere, a tear or a noise burst."""
    how = str(plan.rng.choice(["green", "foreign", "tear", "burst"]))
    n, fps = plan.roll.n, plan.roll.fps
    other = int(plan.rng.integers(0, n))
    rng = np.random.default_rng(int(plan.rng.integers(1 << 31)))

    def edit(frames: list[np.ndarray], f: int, k: int) -> None:
        img = frames[f]
        if how == "green":
            frames[f] = np.full_like(img, (40, 200, 40))
        elif how == "foreign":
            frames[f] = frames[other if abs(other - f) > fps else (f + n // 2) % n].copy()
        elif how == "tear":
            cut = img.shape[0] // 3 + int(rng.integers(0, img.shape[0] // 3))
            out = img.copy()
            out[cut:] = np.roll(img[cut:], img.shape[1] // 4, axis=1)
            frames[f] = out
        else:
            noise = rng.normal(0, 60, img.shape)
            frames[f] = np.clip(img + noise, 0, 255).astype(np.uint8)

    k = _frames_edit(plan, 1, lambda f: True, edit)
    return _event(plan, "frame_corruption", f"glitch_{how}", k, k, f"one frame is wrong ({how})")


def freeze(plan: Plan) -> dict[str, Any]:
    """The picture stops while the arm is moving, then the video catches up."""
    fps = plan.roll.fps
    length = max(2, round(float(plan.rng.uniform(0.5, 1.5)) * fps))

    def moving(k: int) -> bool:
        return all(
            plan.roll.gripper_speed(f) > 90 for f in (k - 2, k - 1, k + length, k + length + 1)
        )

    k = _frames_edit(
        plan, length, moving, lambda frames, f, k: frames.__setitem__(f, frames[k - 1].copy())
    )
    return _event(
        plan,
        "frame_corruption",
        "freeze",
        k - 1,
        k + length - 1,
        f"the picture freezes for {length / fps:.1f} s while the arm is moving",
    )


def blur(plan: Plan) -> dict[str, Any]:
    fps = plan.roll.fps
    length = round(float(plan.rng.uniform(0.5, 2.0)) * fps)
    sigma = 0.011 * plan.size[0] * float(plan.rng.uniform(0.8, 1.4))
    k = _frames_edit(
        plan,
        length,
        lambda f: True,
        lambda frames, f, k: frames.__setitem__(f, cv2.GaussianBlur(frames[f], (0, 0), sigma)),
    )
    return _event(plan, "blur", "blur", k, k + length - 1, "the whole frame goes soft")


def low_visibility(plan: Plan) -> dict[str, Any]:
    fps = plan.roll.fps
    length = round(float(plan.rng.uniform(0.5, 2.0)) * fps)
    how = str(plan.rng.choice(["dark", "fog"]))

    def edit(frames: list[np.ndarray], f: int, k: int) -> None:
        img = frames[f].astype(np.float32)
        out = img * 0.13 if how == "dark" else img * 0.1 + 0.9 * img.mean()
        frames[f] = out.clip(0, 255).astype(np.uint8)

    k = _frames_edit(plan, length, lambda f: True, edit)
    return _event(
        plan,
        "low_visibility",
        f"low_visibility_{how}",
        k,
        k + length - 1,
        "the scene goes nearly black" if how == "dark" else "the picture washes out to grey",
    )


SCENE = {
    "teleportation": teleportation,
    "disappearance": disappearance,
    "hallucination": hallucination,
    "duplicate": duplicate,
    "shake": _shake,
}
FRAME = {
    "corruption": corruption,
    "glitch": glitch,
    "freeze": freeze,
    "blur": blur,
    "low_visibility": low_visibility,
}
INJECTIONS: dict[str, Callable[[Plan], dict[str, Any]]] = {**SCENE, **FRAME}
TYPE_OF = {
    "teleportation": "object_teleportation",
    "disappearance": "object_disappearance",
    "hallucination": "object_hallucination",
    "duplicate": "object_hallucination",
    "shake": "camera_instability",
    "corruption": "frame_corruption",
    "glitch": "frame_corruption",
    "freeze": "frame_corruption",
    "blur": "blur",
    "low_visibility": "low_visibility",
}
