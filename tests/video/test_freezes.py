"""Freeze rules on step traces: what a stall and a catch-up need around their repeats
(``gaze.video.frame_events.freezes`` on hand-made every-frame steps, 30 fps)."""

from __future__ import annotations

import numpy as np

from gaze.video.frame_events import freezes
from gaze.video.steps import LAG, FrameSteps

MOVE, REPEAT = 2.0, 0.02
"""Grey-level steps: the clip's typical motion (the repeat level is then 0.4) and a repeat."""


def _steps(trace: list[float], fps: float = 30.0) -> FrameSteps:
    diff = np.full((len(trace), LAG), np.nan)
    diff[1:, 0] = trace[1:]
    return FrameSteps(times_s=np.arange(len(trace)) / fps, diff=diff)


def _found(trace: list[float]) -> list[tuple[int, int, str]]:
    return [(f.first, f.last, f.evidence[1]) for f in freezes(_steps(trace))]


def test_a_stall_needs_sustained_motion_on_both_sides():
    """Motion that stops dead and goes on is a stall; the same repeats between the isolated
    jumps of a slow pan or zoom (jump, repeats, jump: how renderers and encoders show slow
    camera motion) are not. The second was reported before the rule."""
    assert [f[:2] for f in _found([MOVE] * 20 + [REPEAT] * 20 + [MOVE] * 20)] == [(19, 39)]
    pan = [MOVE, REPEAT, REPEAT, REPEAT] * 5
    assert _found([MOVE] * 60 + pan + [REPEAT] * 20 + pan + [MOVE] * 60) == []


def test_a_clip_that_repeats_all_along_is_judged_by_the_length_of_its_pause():
    """Content at 6 fps in a 30 fps file moves in jumps everywhere: a pause there is a stall
    when it is far longer than the usual hold (an edited pause of 0.9 s in a real generated
    demo), and a usual hold is not."""
    padded = [MOVE, REPEAT, REPEAT, REPEAT, REPEAT] * 12
    paused = _found(padded + [REPEAT] * 26 + padded)
    assert [f[:2] for f in paused] == [(55, 85)]
    assert _found(padded + padded) == []


def test_a_small_step_between_repeats_is_a_refresh_not_a_catch_up():
    """After a freeze, the world catches up: the picture jumps. When it repeats again right
    after, a jump of 1.5 typical steps is an encoder refreshing a still picture (a keyframe in a
    held scene) and is not reported; a jump of 3 typical steps is a world that moved while the
    picture was frozen and then stopped, and one that goes on moving is a catch-up either way."""
    moving = [MOVE] * 20
    refresh = _found(moving + [REPEAT] * 20 + [1.5 * MOVE] + [REPEAT] * 20 + moving)
    assert refresh == []
    stopped = _found(moving + [REPEAT] * 20 + [3 * MOVE] + [REPEAT] * 20 + moving)
    assert [f[:2] for f in stopped] == [(19, 39)] and "catches up" in stopped[0][2]
    goes_on = _found(moving + [REPEAT] * 20 + [1.5 * MOVE] + moving)
    assert [f[:2] for f in goes_on] == [(19, 39)] and "catches up" in goes_on[0][2]
