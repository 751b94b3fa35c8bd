"""Stutters on synthetic per-frame steps: every other frame repeating in mid-motion is found with
its exact frames; the same rhythm all along, slow drift, and a short alternation are not."""

from __future__ import annotations

import numpy as np

from gaze.pixels.stutter import stutters
from gaze.video.steps import LAG, FrameSteps

FPS = 24.0


def steps_of(first_steps: list[float]) -> FrameSteps:
    d1 = np.asarray(first_steps, dtype=np.float64)
    diff = np.full((len(d1), LAG), np.nan)
    diff[:, 0] = d1
    diff[0, 0] = 0.0
    return FrameSteps(times_s=np.arange(len(d1)) / FPS, diff=diff)


def moving(n: int, step: float = 2.0, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(step + rng.uniform(-0.3, 0.3, n))


def test_every_other_frame_repeating_in_mid_motion_is_a_stutter_with_its_frames():
    k, length = 40, 24  # frames k..k+23 (1 s): repeats at k+1, k+3, ..., k+23
    d1 = moving(100)
    for f in range(k + 1, k + length, 2):
        d1[f], d1[f + 1] = 0.05, 4.0  # the repeat, then a double step
    (found,) = stutters(steps_of(d1))
    assert (found.kind, found.first, found.last) == ("stutter", k, k + length - 1)
    assert "12 times in a row" in found.evidence[0]


def test_content_at_half_the_files_rate_is_its_rhythm_not_a_stutter():
    d1 = [0.05 if f % 2 else 4.0 for f in range(100)]
    assert stutters(steps_of(d1)) == []


def test_slow_drift_that_alternates_without_double_steps_is_no_stutter():
    d1 = moving(100)
    for f in range(41, 65, 2):
        d1[f], d1[f + 1] = 0.05, 2.0  # repeats, but the steps between are ordinary
    assert stutters(steps_of(d1)) == []


def test_an_alternation_shorter_than_a_stutter_lasts_is_no_stutter():
    d1 = moving(100)
    for f in range(41, 57, 2):  # eight repeats: 0.63 s at 24 fps
        d1[f], d1[f + 1] = 0.05, 4.0
    assert stutters(steps_of(d1)) == []


def test_a_stutter_inside_an_explained_span_is_left_to_it():
    d1 = moving(100)
    for f in range(41, 65, 2):
        d1[f], d1[f + 1] = 0.05, 4.0
    assert stutters(steps_of(d1), ignore=[(45, 50)]) == []


def test_repeats_between_large_steps_are_a_stutter_even_where_the_motion_around_is_as_large():
    """Real footage at 2-10 fps: the picture difference saturates, so a stutter's double steps
    are no larger than the fast motion around them; near-exact repeats between steps of 6x the
    repeat level and more are still duplicated frames. One slower step inside does not break the
    run."""
    d1 = moving(100, step=6.0)
    for f in range(41, 65, 2):
        d1[f], d1[f + 1] = 0.05, 6.0
    d1[52] = 2.0  # the hand slows for one step
    (found,) = stutters(steps_of(d1))
    assert (found.first, found.last) == (40, 63)
    assert "a repeat's level" in found.evidence[0]
