"""The picture inside a clip's flat margins (letterbox, pillarbox, a slide around an inset
pane), so that the border rule sees the pane's edges."""

from __future__ import annotations

import numpy as np

from gaze.pixels.frame_area import FULL, picture_box


def _clip(make) -> np.ndarray:
    rng = np.random.default_rng(0)
    return np.stack([make(rng, k) for k in range(20)]).astype(np.uint8)


def _scene(rng: np.random.Generator, k: int) -> np.ndarray:
    """A textured, changing picture: sensor noise over a texture that drifts."""
    texture = (np.add.outer(np.arange(120), np.arange(160)) * 3 + 7 * k) % 200 + 30
    noise = rng.integers(-4, 5, (120, 160))
    return np.repeat((texture + noise)[..., None], 3, axis=2)


def test_an_inset_pane_on_a_flat_slide_is_the_picture():
    def slide(rng: np.random.Generator, k: int) -> np.ndarray:
        frame = np.full((120, 160, 3), 30)
        frame[0, :] = 255  # a bright rim at the very edge, as a slide's rounded corners leave
        frame[20:110, 24:136] = _scene(rng, k)[20:110, 24:136]
        return frame

    assert picture_box(_clip(slide)) == (24 / 160, 20 / 120, 136 / 160, 110 / 120)


def test_a_picture_without_margins_is_the_whole_frame():
    assert picture_box(_clip(_scene)) == FULL

    def wall(rng: np.random.Generator, k: int) -> np.ndarray:
        frame = _scene(rng, k)
        frame[50:70, :] = 90  # a flat, still band across the middle is part of the scene
        return frame

    assert picture_box(_clip(wall)) == FULL


def _table(rng: np.random.Generator, k: int) -> np.ndarray:
    """A still camera looking down at a flat, plain table: dark and grey things standing still
    near the frame's edges, a gripper-like bar sweeping across the middle, sensor noise."""
    frame = np.full((120, 160, 3), 128) + rng.integers(-2, 3, (120, 160, 1))
    frame[30:44, 20:34] = 25  # a black block
    frame[80:94, 120:134] = 170  # a grey one
    x = 40 + (6 * k) % 80
    frame[50:70, x : x + 24] = 70  # the gripper, sweeping
    return frame


def test_a_flat_still_table_is_the_picture_not_a_letterbox():
    """A margin must end at a border (the picture's lines just inside differ from its colour
    along most of their length): rows of plain table above a still black block are the table
    itself (this fails without BORDER_SHARE: they were read as a letterbox, and the block as
    touching its edge)."""
    assert picture_box(_clip(_table)) == FULL


def test_the_line_where_a_pane_meets_its_margin_belongs_to_the_margin():
    """A scaled-down slide blends the pane's last line with the margin: that line moves a
    little (the pane's share of it) but stays flat and mostly still. The picture ends before
    it (without BLEND_STILL it ended a line too far out, UniSim's slide: an arm entering at the
    pane's bottom edge was then a thing appearing inside the picture)."""

    def slide(rng: np.random.Generator, k: int) -> np.ndarray:
        frame = np.full((120, 160, 3), 30)
        frame[20:100, 24:136] = _scene(rng, k)[20:100, 24:136]
        # the blended line: the margin's colour on average, a stretch flickering with the pane
        frame[100, :] = 30
        frame[100, 60:84] = 30 + 15 * (-1) ** k
        return frame

    assert picture_box(_clip(slide)) == (24 / 160, 20 / 120, 136 / 160, 100 / 120)
