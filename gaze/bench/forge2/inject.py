"""Forge v2's injected failures, with exact truth: spans at frame instants, and for scene
failures the boxes (normalised output coordinates) of the thing before and after.

An instant change between frames k-1 and k is spanned [(k-1)/fps, k/fps]; a damaged run of
frames k..m is spanned [k/fps, m/fps]; a freeze whose frames k..m repeat frame k-1 is spanned
[(k-1)/fps, m/fps].
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from gaze.bench.forge2.camera import to_output, world_to_output
from gaze.bench.forge2.frames import FRAME_INJECTIONS, Busy, window
from gaze.bench.forge2.script import Rollout, free_spot
from gaze.bench.forge2.world import SHAPES, Thing
from gaze.bench.forge_common import ReferenceEvents, elbow_of

Shake = dict[int, tuple[float, float, float]]
Point = tuple[float, float]


@dataclass
class Plan(ReferenceEvents):
    """Everything a clip's injections decided before the frames are shot (its events are forge
    v1's reference events, with v2's kind in the evidence and the regions)."""

    EVIDENCE = "forge v2"

    roll: Rollout
    size: tuple[int, int]
    rng: np.random.Generator
    busy: Busy = field(default_factory=list)
    shake: Shake = field(default_factory=dict)
    frame_edits: list[Callable[[list[np.ndarray]], None]] = field(default_factory=list)

    def matrix(self, k: int) -> np.ndarray:
        return world_to_output(self.roll.cameras[k], self.size, self.shake.get(k, (0, 0, 0)))

    @property
    def n(self) -> int:
        return self.roll.n

    @property
    def fps(self) -> float:
        return self.roll.fps

    def moving(self, f: int) -> bool:
        """Whether the gripper moves at frame f (a freeze over a still scene shows nothing)."""
        return self.roll.gripper_speed(f) > 90


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
    k = window(plan, 1, _thing_ok(plan, idx))
    before = replace(plan.roll.states[k].things[idx])
    x, y = _new_spot(plan, k)
    for state in plan.roll.states[k:]:
        state.things[idx].x, state.things[idx].y = x, y
    after = plan.roll.states[k].things[idx]
    if box_in_view(plan, after, k) is None or not _clear_of_arm(plan, (x, y), k, 4):
        raise ValueError("teleport destination left the view")
    return plan.event(
        "object_teleportation",
        "teleportation",
        k - 1,
        k,
        f"the {before.colour} {before.shape} jumps to another place between two frames",
        [_region(plan, before, k - 1, "before"), _region(plan, after, k, "after")],
    )


def disappearance(plan: Plan) -> dict[str, Any]:
    idx = int(plan.rng.choice(_untouched(plan)))
    k = window(plan, 1, _thing_ok(plan, idx))
    thing = replace(plan.roll.states[k].things[idx])
    for state in plan.roll.states[k:]:
        state.things[idx].visible = False
    return plan.event(
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

    k = window(plan, 1, ok)
    x, y = _new_spot(plan, k)
    thing = make(x, y)
    for f in (k, k + 2, min(plan.roll.n - 1, k + 4)):
        if box_in_view(plan, thing, f) is None or not _clear_of_arm(plan, (x, y), f, 2):
            raise ValueError("the new thing is not clearly in view")
    for state in plan.roll.states[k:]:
        state.extra.append(replace(thing))
    return plan.event(
        "object_hallucination", kind, k - 1, k, what, [_region(plan, thing, k, "after")]
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
    k = window(plan, length, lambda f: True)
    amplitude = float(plan.rng.uniform(0.015, 0.03)) * plan.size[0]
    for f in range(k, k + length):
        dx, dy = plan.rng.uniform(-amplitude, amplitude, 2)
        plan.shake[f] = (float(dx), float(dy), float(plan.rng.uniform(-1.0, 1.0)))
    return plan.event(
        "camera_instability",
        "shake",
        k,
        k + length - 1,
        "the whole view shakes from frame to frame",
    )


SCENE = {
    "teleportation": teleportation,
    "disappearance": disappearance,
    "hallucination": hallucination,
    "duplicate": duplicate,
    "shake": _shake,
}
FRAME: dict[str, Callable[[Plan], dict[str, Any]]] = {**FRAME_INJECTIONS}
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
