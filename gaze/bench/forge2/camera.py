"""Forge v2's camera: world canvas -> output frame, with light, sensor noise and shake."""

from __future__ import annotations

import cv2
import numpy as np

from gaze.bench.forge2.script import Camera
from gaze.bench.forge2.world import CANVAS_H, CANVAS_W

NOISE_SIGMA = 2.0
"""Sensor noise, grey levels: every frame differs a little, so a held scene is not a freeze."""


def world_to_output(
    camera: Camera, size: tuple[int, int], shake: tuple[float, float, float] = (0, 0, 0)
) -> np.ndarray:
    """The 2x3 affine matrix taking world pixels to output pixels. ``shake`` is (dx, dy) in
    output pixels and a roll in degrees."""
    width, height = size
    scale = width / camera.view_w
    view_h = height / scale
    # keep the view on the canvas (a zoomed-out square view may not fit: then it is centred)
    cy = (
        min(max(camera.cy, view_h / 2), CANVAS_H - view_h / 2)
        if view_h < CANVAS_H
        else CANVAS_H / 2
    )
    cx = min(max(camera.cx, camera.view_w / 2), CANVAS_W - camera.view_w / 2)
    matrix = np.array(
        [[scale, 0, width / 2 - scale * cx], [0, scale, height / 2 - scale * cy]], np.float64
    )
    dx, dy, roll = shake
    if dx or dy or roll:
        turn = cv2.getRotationMatrix2D((width / 2, height / 2), roll, 1.0)
        matrix = turn @ np.vstack([matrix, [0, 0, 1]])
        matrix[:, 2] += (dx, dy)
    return matrix


def to_output(point: tuple[float, float], matrix: np.ndarray) -> tuple[float, float]:
    x, y = point
    return (
        float(matrix[0, 0] * x + matrix[0, 1] * y + matrix[0, 2]),
        float(matrix[1, 0] * x + matrix[1, 1] * y + matrix[1, 2]),
    )


def shoot(
    world: np.ndarray,
    matrix: np.ndarray,
    size: tuple[int, int],
    gain: float,
) -> np.ndarray:
    """One output frame: the warped world, lit by ``gain``, with sensor noise."""
    frame = cv2.warpAffine(
        world, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT101
    )
    noise = np.zeros(frame.shape, np.int16)
    cv2.randn(noise, 0, NOISE_SIGMA)  # type: ignore[call-overload]  # seeded below through cv2.setRNGSeed
    lit = cv2.convertScaleAbs(frame, alpha=gain)
    return np.asarray(cv2.add(lit.astype(np.int16), noise).clip(0, 255).astype(np.uint8))
