"""Forge v2's rollout: what the arm does (pick and carry, push, hold, loop), where the camera
looks (still, pan, zoom, pan and return) and how the light drifts, as per-frame states.

Every motion is a function of continuous time, so a clip at 10 fps and one at 30 fps show the
same rollout; the legitimate motions a clip holds are listed so that false alarms can be traced.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from gaze.bench.forge2.world import (
    ACHROMATIC,
    CANVAS_H,
    CANVAS_W,
    PALETTE,
    SHAPES,
    TABLE_Y,
    Arm,
    Thing,
    WorldState,
)
from gaze.errors import GazeInputError

FINGER = 26.0
"""Finger length: a held thing's footprint is this far below the gripper."""
HOME = (CANVAS_W / 2, 120.0)
OPEN, SHUT_MARGIN = 28.0, 3.0
STAGES = ("varied", "fixed")
"""varied: every camera path, textured tables, coloured objects (forge v2 as first made; its
seeds forge the same clips). fixed: a still camera over a flat table, the gripper sweeping
across it low and fast, and black, grey and white objects among the coloured ones: the clips on
which the pixel default once took the gripper for camera motion and the plain table for a
letterbox margin."""
WIPE_PASSES = (3, 6)
"""The fixed stage's wipe: this many passes back and forth across the table (low, fast, the
motion of wiping or sweeping it)..."""
WIPE_REACH = (90.0, 170.0)
"""...each this many world px either side of the view's centre..."""
WIPE_PASS_S = (0.45, 0.9)
"""...and taking this many seconds (200-750 world px/s)."""
FIXED_VIEW = (340.0, 400.0)
"""The fixed stage's view width in world px, looking down at the table only: no wall, no edge,
the arm and its gripper large in the picture."""


def check_stage(stage: str) -> None:
    """Refuse a stage forge v2 does not know (GazeInputError, one line)."""
    if stage not in STAGES:
        raise GazeInputError(f"forge v2 has no stage {stage!r}; it knows {list(STAGES)}")


def _ease(u: float) -> float:
    return u * u * (3 - 2 * u)


@dataclass
class Camera:
    """Where the camera looks: the view's centre and width in world pixels."""

    cx: float
    cy: float
    view_w: float


@dataclass
class Rollout:
    fps: float
    states: list[WorldState]
    cameras: list[Camera]
    gain: np.ndarray
    """Global light level per frame (1 = as drawn)."""
    instruction: str
    legit: list[str]
    """Legitimate motions in the clip: carry, push, hold, loop, sweep, pan, zoom, pan_return,
    lighting."""
    touched: list[set[str]] = field(default_factory=list)
    """Per frame, the things the arm carries or pushes."""
    tone: tuple[int, int, int] = (140, 140, 145)
    palette: tuple[str, ...] = tuple(PALETTE)
    """Colours a thing may have (an injected one included)."""

    @property
    def n(self) -> int:
        return len(self.states)

    def gripper_speed(self, k: int) -> float:
        """World pixels per second at frame k."""
        a = self.states[max(0, k - 1)].arm.gripper
        b = self.states[min(self.n - 1, k + 1)].arm.gripper
        span = (min(self.n - 1, k + 1) - max(0, k - 1)) / self.fps
        return float(np.hypot(b[0] - a[0], b[1] - a[1]) / max(span, 1e-9))


class _Keys:
    """Gripper keyframes (time, x, y, opening) built segment by segment."""

    def __init__(self) -> None:
        self.keys: list[tuple[float, float, float, float]] = [(0.0, *HOME, OPEN)]
        self.attached: list[tuple[float, float, str, str, float]] = []
        """(t0, t1, thing, 'carry'|'push', x offset of the thing from the gripper)."""

    @property
    def t(self) -> float:
        return self.keys[-1][0]

    @property
    def pose(self) -> tuple[float, float, float]:
        return self.keys[-1][1:]

    def move(self, x: float, y: float, opening: float | None, duration: float) -> None:
        self.keys.append((self.t + duration, x, y, self.pose[2] if opening is None else opening))

    def hold(self, duration: float) -> None:
        self.keys.append((self.t + duration, *self.pose))

    def at(self, t: float) -> tuple[float, float, float]:
        for (t0, *a), (t1, *b) in zip(self.keys, self.keys[1:], strict=False):
            if t0 <= t <= t1:
                u = _ease((t - t0) / (t1 - t0)) if t1 > t0 else 1.0
                return tuple(p + (q - p) * u for p, q in zip(a, b, strict=True))  # type: ignore[return-value]
        return self.pose


def _place(rng: np.random.Generator, count: int, palette: tuple[str, ...]) -> list[Thing]:
    colours = list(rng.permutation(list(palette)))
    things: list[Thing] = []
    for i in range(count):
        for _ in range(200):
            size = float(rng.uniform(28, 44))
            x, y = (
                float(rng.uniform(150, CANVAS_W - 150)),
                float(rng.uniform(TABLE_Y + 80, CANVAS_H - 70)),
            )
            if all(np.hypot(x - t.x, y - t.y) > 75 for t in things):
                break
        things.append(Thing(f"thing{i}", str(colours[i]), str(rng.choice(SHAPES)), x, y, size))
    return things


def free_spot(
    rng: np.random.Generator, things: list[Thing], avoid: list[tuple[float, float]], camera: Camera
) -> tuple[float, float]:
    """A table position inside the view, clear of every thing and of ``avoid`` points."""
    half = camera.view_w / 2 - 45
    for _ in range(500):
        x = float(rng.uniform(max(60, camera.cx - half), min(CANVAS_W - 60, camera.cx + half)))
        y = float(rng.uniform(TABLE_Y + 80, CANVAS_H - 70))
        if all(np.hypot(x - t.x, y - t.y) > 70 for t in things) and all(
            np.hypot(x - ax, y - ay) > 100 for ax, ay in avoid
        ):
            return x, y
    raise ValueError("no free place on the table")


def _camera_path(
    rng: np.random.Generator, duration: float, still: bool = False
) -> tuple[str, Callable[[float], Camera]]:
    """The camera's kind and a function of time giving its pose; a ``still`` one looks down at
    the table from close by (FIXED_VIEW)."""
    base_w = 420.0
    kind = str(rng.choice(["still", "still", "pan", "zoom", "pan_return"]))
    cx0, cy0 = (
        CANVAS_W / 2 + float(rng.uniform(-20, 20)),
        CANVAS_H / 2 + 20 + float(rng.uniform(-10, 10)),
    )
    if still:
        kind, base_w = "still", float(rng.uniform(*FIXED_VIEW))
        cy0 = float(CANVAS_H)  # as low as the view goes (the camera keeps it on the canvas)
    t0 = float(rng.uniform(0.5, max(0.6, duration - 5.0)))
    length = float(rng.uniform(2.0, 3.5))
    dx = float(rng.choice([-1, 1]) * rng.uniform(50, 90))
    zoom = float(rng.choice([0.8, 1.12]))

    def pose(t: float) -> Camera:
        u = _ease(min(1.0, max(0.0, (t - t0) / length)))
        if kind == "pan":
            return Camera(cx0 + dx * u, cy0, base_w)
        if kind == "zoom":
            return Camera(cx0, cy0, base_w * (1 + (zoom - 1) * u))
        if kind == "pan_return":
            back = _ease(min(1.0, max(0.0, (t - t0 - length - 0.5) / length)))
            return Camera(cx0 + dx * (u - back), cy0, base_w)
        return Camera(cx0, cy0, base_w)

    return kind, pose


def rollout(rng: np.random.Generator, fps: float, stage: str = "varied") -> Rollout:
    """One clean rollout: a pick-and-place, maybe a push, a hold and a second pass (a loop); on
    the fixed stage (STAGES) also a sweep across the table."""
    fixed = stage == "fixed"
    palette = (*PALETTE, *ACHROMATIC) if fixed else tuple(PALETTE)
    things = _place(rng, int(rng.integers(3, 6)), palette)
    legit = ["carry"]
    keys = _Keys()
    target = things[0]
    start = (target.x, target.y)

    def carry(thing: Thing, to: tuple[float, float], hold_s: float) -> None:
        grasp_y = thing.y - FINGER
        keys.move(thing.x, grasp_y - 70, OPEN, float(rng.uniform(1.0, 1.5)))
        keys.move(thing.x, grasp_y, OPEN, 0.6)
        keys.move(thing.x, grasp_y, thing.size / 2 + SHUT_MARGIN, 0.4)
        t_grasp = keys.t
        if hold_s:
            keys.hold(hold_s)
        keys.move(thing.x, grasp_y - 70, None, 0.7)
        keys.move(to[0], to[1] - FINGER - 70, None, float(rng.uniform(1.0, 1.6)))
        keys.move(to[0], to[1] - FINGER, None, 0.6)
        keys.attached.append((t_grasp, keys.t, thing.name, "carry", 0.0))
        keys.move(to[0], to[1] - FINGER, OPEN, 0.4)
        keys.move(to[0], to[1] - FINGER - 80, OPEN, 0.6)

    hold_s = float(rng.uniform(0.6, 1.5)) if rng.random() < 0.6 else 0.0
    if hold_s:
        legit.append("hold")
    spot = free_spot(rng, things, [], Camera(CANVAS_W / 2, CANVAS_H / 2, 380))
    carry(target, spot, hold_s)
    if rng.random() < 0.4 and len(things) > 2:  # push another thing sideways
        legit.append("push")
        thing = things[1]
        side = float(rng.choice([-1, 1]))
        offset = side * (thing.size / 2 + 12)
        keys.move(thing.x - offset, thing.y - FINGER - 60, OPEN * 0.5, 1.0)
        keys.move(thing.x - offset, thing.y - FINGER, None, 0.5)
        t0 = keys.t
        distance = float(rng.uniform(40, 70)) * side
        keys.move(thing.x - offset + distance, thing.y - FINGER, None, 1.0)
        keys.attached.append((t0, keys.t, thing.name, "push", offset))
        keys.move(*keys.pose[:2], None, 0.01)
        keys.move(keys.pose[0], keys.pose[1] - 70, OPEN, 0.5)
    if rng.random() < 0.3:  # and back again: the same motion twice
        legit.append("loop")
        carry(replace(target, x=spot[0], y=spot[1]), start, 0.0)  # from where it was put
    if fixed:  # wipe: low and fast back and forth across the table, above the things
        legit.append("sweep")
        side = float(rng.choice([-1, 1]))
        low = TABLE_Y + float(rng.uniform(90, 150))
        reach = float(rng.uniform(*WIPE_REACH))
        keys.move(CANVAS_W / 2 - side * reach, low, OPEN, 0.8)
        for _ in range(int(rng.integers(WIPE_PASSES[0], WIPE_PASSES[1] + 1))):
            side = -side
            keys.move(CANVAS_W / 2 - side * reach, low, OPEN, float(rng.uniform(*WIPE_PASS_S)))
    keys.move(*HOME, OPEN, float(rng.uniform(0.8, 1.2)))
    keys.hold(float(rng.uniform(0.3, 0.8)))
    duration = keys.t

    kind, camera_at = _camera_path(rng, duration, still=fixed)
    if kind != "still":
        legit.append(kind)
    drift = rng.random() < 0.5
    if drift:
        legit.append("lighting")
    amplitude, period, phase = (
        float(rng.uniform(0.08, 0.15)),
        float(rng.uniform(4, 9)),
        float(rng.uniform(0, 6.3)),
    )
    tone = tuple(int(c) for c in rng.uniform(110, 190, 3))
    base = (float(rng.uniform(CANVAS_W * 0.35, CANVAS_W * 0.65)), -60.0)

    states, cameras, gain, touched = [], [], [], []
    for k in range(round(duration * fps)):
        t = k / fps
        gx, gy, opening = keys.at(t)
        current = [Thing(**vars(th)) for th in things]
        by_name = {th.name: th for th in current}
        now: set[str] = set()
        # a thing keeps where its last attachment left it
        for t0, t1, name, mode, offset in keys.attached:
            if t < t0:
                continue
            end = min(t, t1)
            ex, ey, _ = keys.at(end)
            thing = by_name[name]
            if mode == "carry":
                thing.x, thing.y = ex, ey + FINGER
            else:
                thing.x = ex + offset
            if t <= t1:
                now.add(name)
        states.append(WorldState(current, Arm(base, (gx, gy), opening)))
        cameras.append(camera_at(t))
        gain.append(1.0 + (amplitude * np.sin(2 * np.pi * t / period + phase) if drift else 0.0))
        touched.append(now)
    article = "the " + target.colour + " " + target.shape
    return Rollout(
        fps=fps,
        states=states,
        cameras=cameras,
        gain=np.asarray(gain),
        instruction=f"pick up {article} and put it down on the table"
        + (", then push the next object aside" if "push" in legit else "")
        + (", then put it back" if "loop" in legit else ""),
        legit=legit,
        touched=touched,
        tone=tone,  # type: ignore[arg-type]
        palette=palette,
    )
