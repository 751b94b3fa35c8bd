"""Drawing a synthetic tabletop pick-and-place scene with OpenCV.

A side view: wall, table, a plate (the target), a few blocks, and a two-link arm with a parallel
gripper hanging from an overhead mount. The arm fetches one block and puts it on the plate. All
geometry comes from a seeded generator, so a seed fixes the clip exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from gaze.bench.forge_common import elbow_of

WIDTH, HEIGHT = 320, 240
TABLE_Y = 150
COLOURS: dict[str, tuple[int, int, int]] = {  # BGR
    "red": (40, 40, 210),
    "green": (60, 170, 60),
    "blue": (200, 90, 30),
    "yellow": (40, 210, 230),
    "purple": (160, 60, 140),
    "orange": (30, 130, 240),
}
BASE = (WIDTH // 2, 8)
LINK_1, LINK_2 = 115.0, 115.0
HOME = (WIDTH / 2, 95.0)


@dataclass
class Block:
    colour: str
    x: float  # centre
    y: float  # bottom edge (resting on the table when y == TABLE_Y + offset)
    size: int
    visible: bool = True


@dataclass
class SceneState:
    """The world at one frame."""

    blocks: list[Block]
    plate_x: float
    gripper: tuple[float, float]
    opening: float  # half-distance between fingers, pixels
    held: int | None = None  # index of the block in the gripper
    camera_shift: tuple[float, float] = (0.0, 0.0)
    extra: list[Block] = field(default_factory=list)


def _texture(rng: np.random.Generator) -> np.ndarray:
    """A fixed low-frequency texture for wall and table (so frames are not flat colour)."""
    coarse = rng.normal(0, 1, (HEIGHT // 8, WIDTH // 8)).astype(np.float32)
    return np.asarray(cv2.resize(coarse, (WIDTH, HEIGHT), interpolation=cv2.INTER_CUBIC)) * 6.0


def background(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((HEIGHT, WIDTH, 3), np.float32)
    wall = np.array([205, 200, 190], np.float32)
    table = np.array([70, 110, 150], np.float32)
    img[:TABLE_Y] = wall
    img[TABLE_Y:] = table
    img += _texture(rng)[..., None]
    img = np.clip(img, 0, 255).astype(np.uint8)
    cv2.line(img, (0, TABLE_Y), (WIDTH, TABLE_Y), (50, 80, 110), 2)
    return img


def _ik(target: tuple[float, float]) -> tuple[tuple[int, int], tuple[int, int]]:
    """Elbow and wrist pixels of v1's arm reaching ``target``."""
    elbow = elbow_of(BASE, target, (LINK_1, LINK_2))
    return (round(elbow[0]), round(elbow[1])), (round(target[0]), round(target[1]))


def draw_block(img: np.ndarray, block: Block) -> None:
    if not block.visible:
        return
    half = block.size // 2
    x0, y0 = round(block.x) - half, round(block.y) - block.size
    x1, y1 = round(block.x) + half, round(block.y)
    colour = COLOURS[block.colour]
    cv2.rectangle(img, (x0, y0), (x1, y1), colour, -1)
    dark = tuple(int(c * 0.6) for c in colour)
    cv2.rectangle(img, (x0, y0), (x1, y1), dark, 1)


def draw_plate(img: np.ndarray, x: float) -> None:
    centre = (round(x), TABLE_Y + 28)
    cv2.ellipse(img, centre, (34, 9), 0, 0, 360, (235, 235, 235), -1)
    cv2.ellipse(img, centre, (34, 9), 0, 0, 360, (150, 150, 150), 1)


def draw_arm(img: np.ndarray, gripper: tuple[float, float], opening: float) -> None:
    elbow, wrist = _ik(gripper)
    grey, dark = (120, 120, 125), (60, 60, 65)
    cv2.rectangle(img, (BASE[0] - 14, 0), (BASE[0] + 14, BASE[1] + 4), dark, -1)
    cv2.line(img, BASE, elbow, grey, 9)
    cv2.line(img, elbow, wrist, grey, 7)
    for joint in (BASE, elbow):
        cv2.circle(img, joint, 6, dark, -1)
    wx, wy = wrist
    cv2.rectangle(img, (wx - 12, wy - 4), (wx + 12, wy + 2), dark, -1)
    o = round(opening)
    for side in (-1, 1):
        fx = wx + side * o
        cv2.rectangle(
            img, (min(fx, fx + side * 3), wy), (max(fx, fx + side * 3), wy + 14), dark, -1
        )


def render(bg: np.ndarray, state: SceneState) -> np.ndarray:
    img = bg.copy()
    draw_plate(img, state.plate_x)
    # Blocks (held or not) are drawn before the arm so that grasping never changes the
    # drawing order: a sudden z-order swap would itself look like a local glitch.
    for block in [*state.blocks, *state.extra]:
        draw_block(img, block)
    draw_arm(img, state.gripper, state.opening)
    return img
