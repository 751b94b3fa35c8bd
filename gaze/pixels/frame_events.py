"""Glitches and freezes, judged on every decoded frame (``gaze.video.steps``).

A glitch is a run of 1..LAG-1 frames that differ from both neighbours while the neighbours match
each other: frames k..k+L-1 jump away from frame k-1 and back to frame k+L. Motion never does
that (what moves from k-1 to k keeps going), and shaking does it on every frame, so the frames
just outside the run must be calm. While the camera pans or zooms, the frames either side of a
glitch cannot match (they are two steps of motion apart): there one frame is a glitch when its
steps in and out stand out from the motion around it while its neighbours are no further apart
than that motion explains (``_moving_glitch``).

A freeze is a run of repeated pictures in the middle of motion: the picture stops while the
steps just before and just after it move. A legitimate hold slows down first (the robot
decelerates), so the step into the still run is small. "Repeated" is judged against the clip's
own noise: encoders change the first repeats a little, and a clean still scene still has
sensor noise, which heavy compression may or may not remove.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gaze.pixels.runs import true_runs
from gaze.video.steps import LAG, FrameSteps

GLITCH_MIN_JUMP = 2.0
"""Mean grey change into and out of a glitch, at least (0-255 levels on the sample grid)."""
GLITCH_RATIO = 2.5
"""(jump in + jump out) / difference across the glitch, at least: the picture comes back."""
GLITCH_CALM = 0.6
"""The steps just before and after a glitch move at most this share of its smaller jump..."""
GLITCH_CLEAR = 5.0
GLITCH_CLEAR_CALM = 0.7
"""...or at most this share when the picture comes back this clearly (ratio at least
GLITCH_CLEAR: the frames around the glitch all but match): a noise burst that a low-quality
encoder softened to 3 grey levels beside steps of 2 (forge v2 seed 1212 clip 40, ratio 7.1).
Shaking never returns so exactly."""
GLITCH_MOVING_AROUND = 5
"""On a moving picture, the motion around a frame is the median of this many steps either side
of its two steps (none of them touching the frame)..."""
GLITCH_MOVING_JUMP = 1.6
"""...its steps in and out both reach this many times that motion..."""
GLITCH_MOVING_ACROSS = 1.15
"""...the frames either side of it differ by at most this many times the median two-step
difference around (the motion of two steps: nothing came back that was not there)..."""
GLITCH_MOVING_CALM = 1.3
"""...the steps just before and after are ordinary, at most this many times the motion..."""
GLITCH_MOVING_STEADY = 1.6
"""...and the motion around is steady: none of its steps exceeds this many times their median
(a pan or a zoom moves smoothly; a shaking camera's frames pass the other tests now and then,
but its steps vary 1.8-4x). Measured on forge v2 with seeds 2525-3838: one-frame tears and
foreign frames during pans and zooms stand out 1.7-5x, their neighbours 0.7-1.1x apart."""
STILL_SHARE = 0.2
"""A step is a repeat when its difference is below this share of the clip's median step..."""
STILL_CAP = 0.5
"""...and below this many grey levels in any case (an encoder's touch on a repeated frame)."""
FREEZE_MIN_S = 0.4
"""A freeze lasts at least this long..."""
FREEZE_MIN_FRAMES = 3
"""...and at least this many repeated frames."""
FREEZE_MOTION = 1.2
"""A stall: the steps just before and after the repeats both move by at least this many grey
levels..."""
FREEZE_MOTION_SHARE = 4.0
"""...and at least this many times the repeat level (the picture stops and restarts abruptly)."""
STALL_ABRUPT = 0.8
"""...and it stops and restarts at speed: the step into the repeats is at least this share of
the larger of the two before it, and the step out at least this share of the larger of the two
after it. A robot that holds slows down into the hold and speeds up out of it; a model that
stalled went on at the speed it had. The motion around a stall is sustained: the step before
the step into the repeats, and the step after the step out, are not repeats themselves (a slow
pan or zoom that the renderer or the encoder turns into isolated jumps between repeats is not
a stall). A clip that repeats pictures all along moves in such jumps everywhere; there the
length rule (FREEZE_HOLD_FACTOR) decides instead."""
STALL_REFRESH = 2.0
"""A stall's repeats may be interrupted by one step below this many times the repeat level: the
encoder refreshing the stalled picture (forge v2 seed 1616 clip 63: 0.55 grey levels against a
level of 0.5, in the middle of a 0.5 s stall at 10 fps)."""
EASE_OUT_SHARE = 0.6
"""A stall's last repeat stays below this share of the repeat level: a robot easing out of a
hold moves a little on the last frame that still counts as a repeat, where a stalled picture
repeats exactly until it goes on (its first repeats may differ, an encoder settling)."""
CATCH_UP_BEFORE = 2.5
"""A catch-up freeze: the step into the repeats moves by at least this many times the repeat
level (half the clip's typical step: a 30 fps high-resolution clip moves by under a grey level
per frame)..."""
CATCH_UP_SUSTAINED = 4
"""...measured as the median of this many steps before the repeats (the motion is sustained: a
single jump there is an encoder's keyframe pulsing a slowly moving picture)..."""
FREEZE_CATCH_UP = 1.5
"""...and the step out of it jumps by at least this many times the clip's typical step: the
picture stopped while the world went on. A legitimate hold resumes from rest, with a small
first step."""
CATCH_UP_THEN_STILL = 2.5
"""...and when the picture repeats again right after that jump (the world caught up and had
stopped meanwhile), the jump is at least this many times the typical step: a single smaller
step between repeats is an encoder refreshing a still picture (a keyframe), not a catch-up."""
CATCH_UP_SPIKE = 1.2
"""...and the jump is at least this many times the step after it: the world catches up in one
step and then moves on at its own speed, where a robot resuming from a hold speeds up (its first
step no larger than the next)."""
CATCH_UP_ALONE = 4.0
"""A jump out of repeats of at least this many times the typical step is a catch-up whatever
came before it (a low-quality encoder lets the frozen picture settle over a few frames, which
looks like slowing down); no hold resumes with such a jump."""
CATCH_UP_MOVED = 12.0
"""...and something moved while the picture was frozen: in the jump, some cell of the frame's
8x8 grid (``FrameSteps.cells``) changes by at least this many grey levels. An encoder that
re-codes a held picture all at once (the sensor noise it had kept still) changes every cell by
a few grey levels, a jump as large as a small catch-up's (forge v2 seeds 2525-4747: the six
catch-ups so reported where nothing froze, one on a clean clip, changed no cell by more than 9.1;
true catch-ups changed one by 17.9 or more, but for one of 215, 4.9: an h264 clip with drifting
light whose catch-up was mostly the light's change)."""
FREEZE_GAP_SHARE = 1.5
"""Within a catch-up freeze one step may differ (an encoder refreshing the frozen picture) when
it stays below this many times the clip's typical step, or below CATCH_UP_THEN_STILL times it
when no cell changes by CATCH_UP_MOVED in it: a keyframe re-coding the frozen picture all over
(forge v2 seed 4242 clip 30: 2.05 typical steps, 4.8 grey levels at most in a cell)."""
CATCH_UP_LEAD = 0.5
"""A step just before the catch-up jump belongs to the freeze when it is below this share of the
jump, however large: a low-quality encoder may spread the catch-up over two frames (forge v2
seed 2323 clip 85: 2.96 then 8.22 grey levels, then 1.44), which read as a robot speeding up."""
REFRESH_SHARE = 0.5
"""...and a repeated picture settles: once the encoder has refined it, nothing new arrives. A
still scene is a changing picture (sensor noise, light) that a low-quality encoder copies from
frame to frame and refreshes now and then; a catch-up run whose repeats are interrupted by
REFRESHED_STILL or more steps of at least this share of the typical step is such a scene. A
frozen picture's run is interrupted by at most one (a keyframe, or the encoder's first touch
on the repeat)."""
REFRESHED_STILL = 2
DEAD_STILL = 0.03
"""Repeats whose steps average at most this share of the repeat level are one picture copied
bit for bit, which no still scene is (sensor noise and light keep it moving a little: 0.04 and
more on forge v2). After such a run the encoder's refreshes just before a catch-up jump belong
to the freeze when the jump reaches FREEZE_CATCH_UP typical steps, not CATCH_UP_THEN_STILL
(forge v2 seed 808 clip 30 averaged 0.004 and jumped 2.0 typical steps after one refresh)."""
FREEZE_HOLD_FACTOR = 6.0
"""In a clip that repeats pictures all along (low content rate), a freeze must last this many
times its usual hold."""
COMMON_REPEATS = 0.4
"""Share of repeated steps above which repeating may be the clip's normal rhythm..."""
ISOLATED_MOVES = 0.25
"""...when at least this share of its moving steps are single jumps between repeats (content at
a low rate padded to the file's rate; a generated demo that also moves at full rate between its
steps has about half). A clip whose repeats are long holds between sustained motion has no such
rhythm, however long it holds (forge v2's: at most a tenth)."""


@dataclass
class FrameEvent:
    kind: str
    """``glitch`` or ``freeze``."""
    first: int
    last: int
    """Decoded frame indices: the damaged run (glitch), or the last moving frame through the
    last repeat (freeze)."""
    evidence: list[str]
    strength: float
    """How far past its threshold the event is, >= 1."""


Spans = Sequence[tuple[int, int]]


def touches(first: int, last: int, spans: Spans) -> bool:
    return any(first <= e and s <= last for s, e in spans)


def glitches(steps: FrameSteps, ignore: Spans = ()) -> list[FrameEvent]:
    """Glitches outside ``ignore`` (decoded-frame spans already explained: shaking, darkness)."""
    d = steps.diff
    n = len(d)
    found: list[FrameEvent] = []
    k = 1
    while k < n - 1:
        hit = None
        for length in range(1, LAG):
            out_at = k + length
            if out_at >= n:
                break
            jump_in, jump_out = d[k, 0], d[out_at, 0]
            across = d[out_at, length]
            smaller = min(jump_in, jump_out)
            if not smaller >= GLITCH_MIN_JUMP:
                continue
            ratio = (jump_in + jump_out) / max(across, 0.5)
            calm_before = d[k - 1, 0] if k >= 2 else 0.0
            calm_after = d[out_at + 1, 0] if out_at + 1 < n else 0.0
            calm = max(calm_before, calm_after)
            calm_share = GLITCH_CLEAR_CALM if ratio >= GLITCH_CLEAR else GLITCH_CALM
            if ratio >= GLITCH_RATIO and calm <= calm_share * smaller:
                hit = FrameEvent(
                    "glitch",
                    k,
                    out_at - 1,
                    [
                        f"{length} frame(s) jump away by {jump_in:.1f} and back by {jump_out:.1f} "
                        f"grey levels (>= {GLITCH_MIN_JUMP:g}) while the frames around them "
                        f"differ by {across:.1f} (ratio {ratio:.1f} >= {GLITCH_RATIO:g})",
                        f"neighbouring steps calm: {calm:.1f} <= {calm_share:g} x {smaller:.1f}",
                    ],
                    ratio / GLITCH_RATIO,
                )
                break
        if hit is None:
            hit = _moving_glitch(d, k)
        if hit and touches(hit.first - 1, hit.last + 1, ignore):
            hit = None
        if hit:
            found.append(hit)
            k = hit.last + 2
        else:
            k += 1
    return found


def _moving_glitch(d: np.ndarray, k: int) -> FrameEvent | None:
    """Frame k as a glitch on a moving picture (GLITCH_MOVING_*), or None. ``d`` is the steps'
    ``diff``: d[k, 0] steps into frame k, d[k + 1, 0] out of it, d[k + 1, 1] across it."""
    w = GLITCH_MOVING_AROUND
    if k < w + 1 or k + 2 + w > len(d):
        return None
    jump_in, jump_out, across = float(d[k, 0]), float(d[k + 1, 0]), float(d[k + 1, 1])
    smaller = min(jump_in, jump_out)
    calm = max(float(d[k - 1, 0]), float(d[k + 2, 0]))
    # what the tests below imply on their own, without the medians (most frames stop here)
    if not (
        smaller >= GLITCH_MIN_JUMP and smaller * GLITCH_MOVING_CALM >= GLITCH_MOVING_JUMP * calm
    ):
        return None
    around = np.r_[d[k - w : k, 0], d[k + 2 : k + 2 + w, 0]]
    motion = float(np.median(around))
    two_steps = float(np.median(np.r_[d[k - w + 1 : k, 1], d[k + 3 : k + 3 + w, 1]]))
    if not (
        motion > 0
        and smaller >= GLITCH_MOVING_JUMP * motion
        and across <= GLITCH_MOVING_ACROSS * two_steps
        and calm <= GLITCH_MOVING_CALM * motion
        and float(around.max()) <= GLITCH_MOVING_STEADY * motion
    ):
        return None
    return FrameEvent(
        "glitch",
        k,
        k,
        [
            f"1 frame jumps away by {jump_in:.1f} and back by {jump_out:.1f} grey levels while "
            f"the picture moves by {motion:.1f} a step (>= {GLITCH_MOVING_JUMP:g}x)",
            f"the frames around it differ by {across:.1f}, what two steps of that motion give "
            f"({two_steps:.1f}, <= {GLITCH_MOVING_ACROSS:g}x); neighbouring steps ordinary: "
            f"{calm:.1f} <= {GLITCH_MOVING_CALM:g} x {motion:.1f}",
        ],
        smaller / (GLITCH_MOVING_JUMP * motion),
    )


def typical_step(steps: FrameSteps) -> float:
    """The clip's median step between consecutive frames that are not repeats."""
    first = steps.diff[1:, 0]
    moving = first[first > STILL_CAP]
    return float(np.median(moving)) if moving.size else STILL_CAP


def still_level(steps: FrameSteps) -> float:
    """Difference below which a step repeats the picture, learned from the clip's steps."""
    return min(STILL_CAP, STILL_SHARE * typical_step(steps))


def _bridged(
    runs: list[tuple[int, int]],
    d1: np.ndarray,
    gap: float,
    jump: float,
    copied: Copied,
    calm: np.ndarray,
) -> list[tuple[int, int]]:
    """Runs of repeats joined across single steps below ``gap`` (or below ``jump`` where
    ``calm``: nothing moved in the step), each run taken through the encoder's refreshes just
    before a catch-up jump (``_through_refresh``): a jump of ``jump``, or of ``copied[1]`` after a
    run whose steps average at most ``copied[0]`` (DEAD_STILL)."""
    out = _joined(runs, (d1 < gap) | (calm & (d1 < jump)))
    still, copied_jump = copied
    return [
        (s, _through_refresh(e, d1, gap, copied_jump if d1[s : e + 1].mean() <= still else jump))
        for s, e in out
    ]


def _joined(runs: list[tuple[int, int]], passable: np.ndarray) -> list[tuple[int, int]]:
    """Runs of repeats joined across single ``passable`` steps."""
    out: list[tuple[int, int]] = []
    for s, e in runs:
        if out and s == out[-1][1] + 2 and passable[s - 1]:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


Copied = tuple[float, float]
"""(the mean step at most, the jump at least) of a copied picture's catch-up (DEAD_STILL)."""


def _through_refresh(e: int, d1: np.ndarray, gap: float, jump: float) -> int:
    """The run's last frame, moved past up to LAG-1 small steps (each below ``gap``, or below
    CATCH_UP_LEAD of the jump after it) that come just before a jump of ``jump`` or more: an
    encoder refreshing the frozen picture, or starting on the catch-up a frame early."""
    for extra in range(1, LAG):
        after = e + extra + 1
        if after >= len(d1) or d1[e + extra] >= max(gap, CATCH_UP_LEAD * d1[after]):
            break
        if d1[after] >= jump:
            return e + extra
    return e


def repeated(steps: FrameSteps, level: float) -> np.ndarray:
    """Per decoded frame, whether its step to the one before repeats the picture (frame 0:
    False)."""
    still = np.zeros(len(steps.diff), dtype=bool)
    still[1:] = steps.diff[1:, 0] < level
    return still


def repeating_rhythm(still: np.ndarray) -> bool:
    """Whether repeating is the clip's rhythm: common (COMMON_REPEATS), and its moves mostly
    single jumps between repeats (ISOLATED_MOVES)."""
    return bool(still.mean() > COMMON_REPEATS) and _jumps_between_repeats(still)


def _jumps_between_repeats(still: np.ndarray) -> bool:
    """Whether at least ISOLATED_MOVES of the moving steps are single jumps between repeats."""
    moving = ~still[1:-1]
    isolated = moving & still[:-2] & still[2:]
    return bool(moving.any()) and isolated.sum() >= ISOLATED_MOVES * moving.sum()


def freezes(steps: FrameSteps, ignore: Spans = ()) -> list[FrameEvent]:
    """Freezes whose run and bounding steps touch no ``ignore`` span (a glitch is no motion, and
    darkness flattens every step). Two kinds: a stall (the picture stops and restarts abruptly,
    as an autoregressive model that stalled and went on from the frozen frame) and a catch-up
    (the picture stops mid-motion and jumps to where the world went meanwhile)."""
    d1 = steps.diff[:, 0]
    n = len(d1)
    if n < 4:
        return []
    level = still_level(steps)
    typical = typical_step(steps)
    still = repeated(steps, level)
    runs = true_runs(still)
    times = steps.times_s
    rhythm = len(runs) >= 3 and repeating_rhythm(still)
    usual = float(np.median([times[e] - times[s - 1] for s, e in runs])) if rhythm else 0.0
    stall = max(FREEZE_MOTION, FREEZE_MOTION_SHARE * level)
    into, catch_up = CATCH_UP_BEFORE * level, FREEZE_CATCH_UP * typical
    gap, jump = FREEZE_GAP_SHARE * typical, CATCH_UP_THEN_STILL * typical
    refresh = REFRESH_SHARE * typical
    # a clip that repeats all along keeps its holds apart, and its pauses are judged as stalls
    copied = (DEAD_STILL * level, catch_up)
    # steps in which nothing moved (no cell changes by CATCH_UP_MOVED): the encoder re-coding
    calm = (
        steps.cells.max(axis=(1, 2)) < CATCH_UP_MOVED
        if steps.cells is not None
        else np.zeros(n, dtype=bool)
    )
    bridged = [] if rhythm else _bridged(runs, d1, gap, jump, copied, calm)
    found: list[FrameEvent] = []
    # catch-ups first: a bridged run explains the whole freeze, its pieces would be stalls
    stalls = runs if rhythm else _joined(runs, d1 < STALL_REFRESH * level)
    for (s, e), kind in [(r, "catch-up") for r in bridged] + [(r, "stall") for r in stalls]:
        # the step out needs a step after it: a jump on the last frame may be the encoder's
        # final refresh of a still picture, and nothing after it tells the two apart
        if s < 2 or e + 2 >= n or e - s + 1 < FREEZE_MIN_FRAMES:
            continue
        if touches(s - 2, e + 1, ignore) or touches(s - 1, e, [(f.first, f.last) for f in found]):
            continue
        if times[e] - times[s - 1] < max(FREEZE_MIN_S, FREEZE_HOLD_FACTOR * usual) - 1e-9:
            continue
        after = float(d1[e + 1])
        if kind == "stall":
            before = float(np.max(d1[max(1, s - 2) : s]))
            strength = min(before, after) / stall
            slowing = d1[s - 1] < STALL_ABRUPT * float(np.max(d1[max(1, s - 3) : s - 1], initial=0))
            speeding = d1[e + 1] < STALL_ABRUPT * float(np.max(d1[e + 2 : e + 4], initial=0))
            easing = d1[e] >= EASE_OUT_SHARE * level  # the last repeat already moves
            if slowing or speeding or easing:  # eased into or out of a hold: the robot paused
                continue
            jumpy = d1[max(1, s - 2)] < level or (e + 2 < n and d1[e + 2] < level)
            if jumpy and not rhythm:
                continue  # isolated jumps between repeats: a slow pan or zoom, not a stall
            why = f"motion just before {before:.1f} and just after {after:.1f} (>= {stall:.1f})"
        else:
            if d1[e + 2] < level and after < jump:
                continue  # one step between repeats: an encoder refreshing a still picture
            if after < CATCH_UP_SPIKE * d1[e + 2]:
                continue  # the first step is no larger than the next: a robot resuming
            if calm[e + 1]:
                continue  # re-coded all over, nothing moved: an encoder refreshing a hold
            if int((d1[s : e + 1] >= refresh).sum()) >= REFRESHED_STILL:
                continue  # refreshed again and again: a still scene, not a repeated picture
            # sustained, not one jump: an encoder's keyframe pulses the picture in slow motion
            before = float(np.median(d1[max(1, s - CATCH_UP_SUSTAINED) : s]))
            strength = min(before / into, after / max(into, catch_up))
            why = (
                f"motion just before {before:.1f} (median of {CATCH_UP_SUSTAINED} steps, >= "
                f"{into:.1f}); the picture then jumps by "
                f"{after:.1f} as the world catches up (>= {catch_up:.1f})"
            )
            if strength < 1 and after >= CATCH_UP_ALONE * typical:
                strength = after / (CATCH_UP_ALONE * typical)
                why = (
                    f"the picture then jumps by {after:.1f} as the world catches up (>= "
                    f"{CATCH_UP_ALONE:g} x the clip's typical step {typical:.1f}: no hold "
                    "resumes like that)"
                )
        if strength < 1:
            continue
        found.append(
            FrameEvent(
                "freeze",
                s - 1,
                e,
                [
                    f"{e - s + 1} frames repeat the picture (step < {level:.2f} grey levels, "
                    "learned from the clip)",
                    why,
                ],
                strength,
            )
        )
    return sorted(found, key=lambda f: f.first)
