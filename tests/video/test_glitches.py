"""Glitch rules on step traces (``gaze.video.frame_events.glitches`` on hand-made every-frame
steps): how calm the frames around a one-frame glitch must be."""

from __future__ import annotations

import numpy as np

from gaze.video.frame_events import glitches
from gaze.video.steps import LAG, FrameSteps

MOVE = 2.0
"""Grey-level step of steady motion; a frame j steps back differs by about (j + 1) x MOVE."""


def _moving_with_glitch(frames: int, at: int, jump: float, across: float) -> FrameSteps:
    """Steady motion with frame ``at`` jumping away by ``jump`` and back, the frames either
    side of it differing by ``across``."""
    diff = np.array([[MOVE * (j + 1) for j in range(LAG)] for _ in range(frames)])
    diff[0] = np.nan
    diff[at, 0], diff[at + 1, 0], diff[at + 1, 1] = jump, jump, across
    return FrameSteps(times_s=np.arange(frames) / 30.0, diff=diff)


def test_a_clear_return_beside_moving_frames_is_a_glitch():
    """A burst softened to 3 grey levels in a clip moving by 2 per frame: its neighbours move by
    0.67 of its jump, more than GLITCH_CALM allows, but the picture comes back all but exactly
    (ratio 12), so it is a glitch (forge v2 seed 1212 clip 40 was missed so). A weaker return
    (ratio 3) beside the same motion is not."""
    found = glitches(_moving_with_glitch(30, 15, jump=3.0, across=0.45))
    assert [(g.first, g.last) for g in found] == [(15, 15)]
    assert "0.7 x 3.0" in found[0].evidence[1]
    assert glitches(_moving_with_glitch(30, 15, jump=3.0, across=2.0)) == []
