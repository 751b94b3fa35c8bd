"""Forge v2's world: a textured tabletop canvas, several objects, a shaded arm with a shadow.

The world is drawn on a fixed canvas (CANVAS_W x CANVAS_H world pixels); the camera
(``gaze.bench.forge2.camera``) then looks at part of it at any output size. Everything is
seeded, so a seed fixes every picture exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from gaze.bench.forge_common import elbow_of

CANVAS_W, CANVAS_H = 640, 480
TABLE_Y = 180
"""World row where the wall meets the table; objects stand lower, between TABLE_Y + 50 and the
bottom (a view from above and in front)."""
PALETTE: dict[str, tuple[int, int, int]] = {  # BGR, chosen to stand apart from every texture
    "red": (45, 45, 205),
    "green": (70, 165, 60),
    "blue": (190, 95, 35),
    "yellow": (45, 205, 225),
    "purple": (150, 60, 135),
    "orange": (35, 125, 235),
    "cyan": (200, 190, 60),
    "white": (235, 235, 235),
}
ACHROMATIC: dict[str, tuple[int, int, int]] = {"black": (28, 28, 30), "grey": (120, 120, 118)}
"""Colours only the fixed stage uses (with PALETTE's white): the shadow test, which compares
chromaticity, once rejected most objects without a hue."""
COLOURS = {**PALETTE, **ACHROMATIC}
SHAPES = ("block", "disc", "cup")


@dataclass
class Thing:
    """One object on the table; (x, y) is the centre of its footprint in world pixels."""

    name: str
    colour: str
    shape: str
    x: float
    y: float
    size: float
    visible: bool = True

    def box(self) -> tuple[float, float, float, float]:
        """(x0, y0, x1, y1) of what is drawn, world pixels."""
        half = self.size / 2
        top = self.y - self.size * (1.2 if self.shape == "cup" else 0.9)
        return self.x - half, top, self.x + half, self.y + self.size * 0.15


@dataclass
class Arm:
    """The arm at one instant: its base is off the top edge, so the body always enters the
    picture from the frame edge, like a real arm."""

    base: tuple[float, float]
    gripper: tuple[float, float]
    opening: float
    links: tuple[float, float] = (230.0, 230.0)


@dataclass
class WorldState:
    things: list[Thing]
    arm: Arm
    extra: list[Thing] = field(default_factory=list)
    """Things injected by a failure (a hallucinated object, a duplicate)."""

    def copy(self) -> WorldState:
        return WorldState(
            [replace(t) for t in self.things], replace(self.arm), [replace(t) for t in self.extra]
        )


def _noise(rng: np.random.Generator, cells: tuple[int, int], size: tuple[int, int]) -> np.ndarray:
    coarse = rng.normal(0, 1, cells).astype(np.float32)
    return np.asarray(cv2.resize(coarse, size, interpolation=cv2.INTER_CUBIC))


def texture(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """A grey-level texture (zero mean): fractal noise, wood grain, tiles or fabric."""
    kind = rng.choice(["fractal", "wood", "tiles", "fabric"])
    size = (width, height)
    if kind == "fractal":
        out = sum(
            _noise(rng, (max(2, height // s), max(2, width // s)), size) * a
            for s, a in ((64, 9.0), (16, 5.0), (4, 2.5))
        )
    elif kind == "wood":
        y = np.arange(height, dtype=np.float32)[:, None]
        warp = _noise(rng, (max(2, height // 40), max(2, width // 40)), size) * 12
        period = float(rng.uniform(7, 15))
        out = (
            10 * np.sin((y + warp) / period * 2 * np.pi)
            + _noise(rng, (height // 4, width // 4), size) * 3
        )
    elif kind == "tiles":
        tile = int(rng.integers(24, 48))
        yy, xx = np.mgrid[0:height, 0:width]
        grout = ((yy % tile) < 2) | ((xx % tile) < 2)
        shade = rng.normal(0, 6, (height // tile + 1, width // tile + 1))
        out = (
            shade[yy // tile, xx // tile]
            - 22 * grout
            + _noise(rng, (height // 3, width // 3), size)
        )
    else:
        yy, xx = np.mgrid[0:height, 0:width]
        out = (
            6 * np.sin(xx * 0.9) * np.sin(yy * 0.9)
            + _noise(rng, (height // 8, width // 8), size) * 6
        )
    return np.asarray(out, dtype=np.float32)


def backdrop(rng: np.random.Generator, flat_table: bool = False) -> np.ndarray:
    """Wall and table, each with its own colour and texture (a ``flat_table`` has none, as a
    plain tabletop under even light), and some clutter on the wall."""
    img = np.zeros((CANVAS_H, CANVAS_W, 3), np.float32)
    wall = rng.uniform(120, 215, 3).astype(np.float32)
    table = rng.uniform(60, 160, 3).astype(np.float32)
    img[:TABLE_Y] = wall
    img[TABLE_Y:] = table
    img[:TABLE_Y] += texture(rng, CANVAS_W, TABLE_Y)[..., None]
    if not flat_table:
        img[TABLE_Y:] += texture(rng, CANVAS_W, CANVAS_H - TABLE_Y)[..., None]
    out = np.clip(img, 0, 255).astype(np.uint8)
    cv2.line(out, (0, TABLE_Y), (CANVAS_W, TABLE_Y), tuple(int(c * 0.6) for c in table), 3)
    for _ in range(int(rng.integers(1, 4))):  # shelves, posters: structure for the camera
        x0, y0 = int(rng.integers(0, CANVAS_W - 80)), int(rng.integers(10, TABLE_Y - 60))
        w, h = int(rng.integers(40, 120)), int(rng.integers(20, 50))
        colour = tuple(int(c) for c in rng.uniform(40, 230, 3))
        cv2.rectangle(out, (x0, y0), (x0 + w, y0 + h), colour, -1)
    return out


def draw_thing(img: np.ndarray, thing: Thing) -> None:
    if not thing.visible:
        return
    colour = COLOURS[thing.colour]
    dark = tuple(int(c * 0.55) for c in colour)
    light = tuple(min(255, int(c * 1.25) + 20) for c in colour)
    x0, y0, x1, y1 = (round(v) for v in thing.box())
    cx, s = round(thing.x), thing.size
    if thing.shape == "block":
        cv2.rectangle(img, (x0, y0), (x1, y1), colour, -1)
        cv2.rectangle(img, (x0, y0), (x1, y0 + max(2, round(s * 0.2))), light, -1)
        cv2.rectangle(img, (x0, y0), (x1, y1), dark, 1)
    elif thing.shape == "disc":
        cy = round((y0 + y1) / 2)
        cv2.ellipse(img, (cx, cy), (round(s / 2), round(s * 0.45)), 0, 0, 360, colour, -1)
        cv2.ellipse(
            img,
            (cx - round(s / 8), cy - round(s / 8)),
            (round(s / 6), round(s / 8)),
            0,
            0,
            360,
            light,
            -1,
        )
        cv2.ellipse(img, (cx, cy), (round(s / 2), round(s * 0.45)), 0, 0, 360, dark, 1)
    else:  # cup: a body and a rim
        cv2.rectangle(img, (x0 + 2, y0 + round(s * 0.15)), (x1 - 2, y1), colour, -1)
        cv2.ellipse(
            img,
            (cx, y0 + round(s * 0.15)),
            (round(s / 2) - 2, round(s * 0.15)),
            0,
            0,
            360,
            light,
            -1,
        )
        cv2.rectangle(img, (x0 + 2, y0 + round(s * 0.15)), (x1 - 2, y1), dark, 1)


def draw_shadow(img: np.ndarray, arm: Arm) -> None:
    """The gripper's soft shadow on the table, straight below it (a light from above)."""
    gx, gy = arm.gripper
    floor = max(gy + 30, TABLE_Y + 60)
    size = max(6.0, 30 - (floor - gy) * 0.08)
    x0, y0 = int(gx - 2 * size), int(floor - size)
    x1, y1 = int(gx + 2 * size), int(floor + size)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(CANVAS_W, x1), min(CANVAS_H, y1)
    if x1 <= x0 or y1 <= y0:
        return
    patch = img[y0:y1, x0:x1].astype(np.float32)
    mask = np.zeros(patch.shape[:2], np.float32)
    cv2.ellipse(
        mask,
        (round(gx) - x0, round(floor) - y0),
        (round(size * 1.4), round(size * 0.5)),
        0,
        0,
        360,
        1.0,
        -1,
    )
    mask = np.asarray(cv2.GaussianBlur(mask, (0, 0), size * 0.4), np.float32)
    img[y0:y1, x0:x1] = (patch * (1 - 0.35 * mask[..., None])).astype(np.uint8)


def draw_arm(img: np.ndarray, arm: Arm, tone: tuple[int, int, int]) -> None:
    elbow = elbow_of(arm.base, arm.gripper, arm.links)
    dark = tuple(int(c * 0.5) for c in tone)
    base = (round(arm.base[0]), round(arm.base[1]))
    el = (round(elbow[0]), round(elbow[1]))
    wx, wy = round(arm.gripper[0]), round(arm.gripper[1])
    cv2.line(img, base, el, dark, 26)
    cv2.line(img, base, el, tone, 20)
    cv2.line(img, el, (wx, wy), dark, 20)
    cv2.line(img, el, (wx, wy), tone, 15)
    cv2.circle(img, el, 13, dark, -1)
    cv2.rectangle(img, (wx - 22, wy - 8), (wx + 22, wy + 4), dark, -1)
    o = round(arm.opening)
    for side in (-1, 1):
        fx = wx + side * o
        cv2.rectangle(
            img, (min(fx, fx + side * 6), wy), (max(fx, fx + side * 6), wy + 26), dark, -1
        )


def render_world(
    backdrop_img: np.ndarray, state: WorldState, tone: tuple[int, int, int]
) -> np.ndarray:
    img = backdrop_img.copy()
    draw_shadow(img, state.arm)
    # far things first, so nearer ones overlap them; the arm is always in front
    for thing in sorted([*state.things, *state.extra], key=lambda t: t.y):
        draw_thing(img, thing)
    draw_arm(img, state.arm, tone)
    return img
