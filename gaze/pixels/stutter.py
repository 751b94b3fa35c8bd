"""Stutters, judged on every decoded frame (``gaze.video.steps``): a stretch where every other
frame repeats the one before while the picture moves, so the motion advances in double steps at
half its rate. A generator that drops frames and pads them back, or a frame-rate conversion gone
wrong in one stretch, does this; ``gaze probe`` injects it.

A clip that repeats every other frame all along (content at half the file's rate) has that as
its rhythm, not a stutter: the freeze detector's rhythm test (``frame_events``) rules it out
first. A repeat counts with the step after it only when that step moves.
"""

from __future__ import annotations

import numpy as np

from gaze.pixels.frame_events import (
    FrameEvent,
    Spans,
    repeated,
    repeating_rhythm,
    still_level,
    touches,
)
from gaze.video.steps import FrameSteps

STUTTER_MIN_REPEATS = 3
"""Repeats in a row, each followed by one moving step, that make a stutter (two could be a
robot's brief hesitation twice)..."""
STUTTER_MIN_S = 0.8
"""...over at least this long: an arm that speeds up or slows down alternates still and moving
steps for a moment (forge v2: 0.2 s of slow drift on seed 1515; 0.47-0.5 s of a gripper sweeping
a plain table at 10-15 fps on the fixed stage's seeds 9191 and 9292, which chose this)."""
STUTTER_MOVE = 3.0
"""The steps after the repeats move by at least this many times the clip's still level (their
median: one slower step, a hand slowing for a moment, does not break the run)."""
STUTTER_FAST = 6.0
"""Steps after the repeats of at least this many times the still level are double steps
whatever the motion around does: near-exact repeats between steps this large are duplicated
frames, not slow drift. (On real footage the picture difference saturates: a hand or an
egocentric camera moving fast changes about as much in two frames as in one, so the double
steps of a stutter at 2-10 fps are no larger than the steps around them.)"""
STUTTER_DOUBLED = 1.3
"""...and the median of those steps is at least this many times the median moving step just
around the run (AROUND steps either side, the slower side): the motion goes on at its speed in
double steps. Slow
motion that moves a pixel every other frame alternates too, in steps no larger than its own (a
forge v1 arm that speeds up right after a stutter leaves its double steps 1.4x the steps around
them at 10 fps)."""
AROUND = 4
STUTTER_MAX_SHARE = 0.5
"""A run of alternation longer than this share of the clip is the clip's own rhythm."""


def stutters(steps: FrameSteps, ignore: Spans = ()) -> list[FrameEvent]:
    """Stretches of at least STUTTER_MIN_REPEATS repeat-then-move pairs, touching no
    ``ignore`` span. Each event runs from the last frame before the first repeat through the
    last repeat."""
    d1 = steps.diff[:, 0]
    n = len(d1)
    if n < 2 * STUTTER_MIN_REPEATS + 2:
        return []
    level = still_level(steps)
    times = steps.times_s
    still = repeated(steps, level)
    if repeating_rhythm(still):
        return []  # the clip repeats as its rhythm
    pairs = [r for r in range(1, n - 1) if still[r] and not still[r + 1]]
    found: list[FrameEvent] = []
    run: list[int] = []
    for repeat in [*pairs, -10]:  # a sentinel closes the last run
        if run and repeat == run[-1] + 2:
            run.append(repeat)
            continue
        if len(run) >= STUTTER_MIN_REPEATS and 2 * len(run) <= STUTTER_MAX_SHARE * n:
            first, last = run[0] - 1, run[-1]
            doubled = float(np.median(d1[[r + 1 for r in run]]))
            sides = (d1[max(1, first - AROUND + 1) : first + 1], d1[last + 2 : last + 2 + AROUND])
            # the slower side: an arm that slows into a stutter or speeds out of one moves
            # faster on the other side than the double steps do
            usual = min(
                (float(np.median(side[side >= level])) for side in sides if (side >= level).any()),
                default=0.0,
            )
            # motion just before: a hold that starts with repeats is a pause, not a stutter
            if (
                not still[first]
                and doubled >= STUTTER_MOVE * level
                and (doubled >= STUTTER_DOUBLED * usual or doubled >= STUTTER_FAST * level)
                and times[last] - times[first] >= STUTTER_MIN_S - 1e-9
                and not touches(first, last + 1, ignore)
            ):
                found.append(
                    FrameEvent(
                        "stutter",
                        first,
                        last,
                        [
                            f"every other frame repeats the one before, {len(run)} times in a "
                            f"row, while the picture moves {doubled:.1f} per step between them, "
                            + (
                                f"{doubled / max(usual, 1e-9):.1f}x its slower side's steps "
                                if doubled >= STUTTER_DOUBLED * usual
                                else f"{doubled / level:.0f}x a repeat's level "
                            )
                            + f"(repeats below {level:.2f})"
                        ],
                        min(2.0, len(run) / STUTTER_MIN_REPEATS),
                    )
                )
        run = [repeat]
    return found
