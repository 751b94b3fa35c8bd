"""From pixel signals to candidate failure events (DESIGN section 8).

Each detector reads the per-frame signals (and, for local changes, the thumbnails) and returns
findings (``gaze.pixels.pixel_event``: the report's event fields as plain values), their
evidence naming the signal and its value. Thresholds are the
named constants below; they were chosen on forge clips (where the truth is known) and checked for
false alarms on the real clips of the shared set (see bench/pixel_evidence.py).

What pixels cannot tell is left to the model-based graph: a frozen span may be a legitimate pause,
a local change may be an occlusion. Detectors therefore demand sudden, isolated changes and give
modest confidences.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gaze.pixels.frame_events import CATCH_UP_MOVED, STALL_ABRUPT, typical_step
from gaze.pixels.frame_evidence import FrameLevel, frame_events, glitch_spans
from gaze.pixels.local_change import LocalChange, local_changes
from gaze.pixels.motion import camera_confirms
from gaze.pixels.pixel_event import PixelFinding, PixelRegion, events_of, pixel_finding
from gaze.pixels.runs import near, true_runs
from gaze.pixels.shake import SHAKE_SHIFT_PX, shaking_frames
from gaze.pixels.signals import SAME_PICTURE_DIFF, SignalSeries, distinct_steps, edge_strength
from gaze.video.clip import AnalysisFrames
from gaze.video.spill import Frames
from gaze.video.steps import FrameSteps, exact_frame, widened_to_frames

if TYPE_CHECKING:
    from gaze.schema.events import Event

CHANGE_AWAY_FROM_MOTION = 0.5
"""An object's jump (``gaze.pixels.local_change``) is what a freeze's catch-up shows when, on the
three frames before the repeats, both its places stepped by at most this share of the picture's
busiest cell: the motion that slowed to a hold was elsewhere."""

OBJECT_JUMPS = ("object_teleportation", "object_hallucination")
"""Object events that a freeze's catch-up may turn out to be (``_not_object_changes``): a thing
teleporting or appearing while the scene holds (forge v2 seed 1111 clip 45, seed 5050 clips 26
and 48)."""

# -- visual quality ---------------------------------------------------------------------------
DARK_LEVEL = 35.0
"""Mean grey level below which a frame is too dark to read (forge darkening gives ~17)."""
BRIGHT_LEVEL = 235.0
"""Mean grey level above which a frame is washed out (the brightest real clip sits at ~221)."""
LOW_CONTRAST = 12.0
"""Grey-level standard deviation below which a frame shows almost nothing (real clips >= 31)..."""
FLAT_SHARE = 0.5
"""...when it is also below this share of the clip's median contrast (a blur softens contrast
to 0.6-1.0x of the median, fog or a washed-out picture to 0.1x)..."""
VERY_FLAT = 6.0
"""...or below this in any case (a clip that is flat from start to end)..."""
CRISP_EDGE = 30.0
"""...unless its sharpest edges (``gaze.pixels.signals.edge_strength``) step by at least this
many levels a pixel: a plain table under a still camera with a few things on it has little
contrast over the whole frame and is perfectly visible (forge v2's fixed stage: 70-100 on
contrast 4-7), fog leaves no such edge (7-15 through forge's fog, 20 on a frame the encoder
blends into it)."""
BLUR_RATIO = 0.3
"""A frame is blurred when its normalised sharpness falls below this fraction of the clip median
(real clips never go below 0.8 of their median; forge blur gives < 0.05)."""
MIN_SPAN_S = 0.3
"""Blur and low visibility must last this long to count (shorter is corruption or a flash)."""
GLITCH_CHANGED_FRACTION = 0.25
"""Share of pixels that must change into a frame for it to be a candidate glitch or cut."""
CUT_BRIGHTNESS_DELTA = 20.0
"""A persistent global change with a larger brightness jump is lighting, not a camera jump."""


def _margin_confidence(value: float, threshold: float, higher_is_worse: bool = True) -> float:
    """0.5 at the threshold, rising toward 0.95 as the value goes past it."""
    ratio = value / threshold if higher_is_worse else threshold / max(value, 1e-9)
    return 0.5 + 0.45 * min(1.0, max(0.0, ratio - 1.0))


def _long_enough(
    runs: list[tuple[int, int]], times: np.ndarray, fps: float
) -> list[tuple[int, int]]:
    return [(s, e) for s, e in runs if times[e] - times[s] + 1.0 / fps >= MIN_SPAN_S - 1e-9]


def low_visibility(
    sig: SignalSeries, fps: float, thumbs: Frames | None = None
) -> tuple[list[PixelFinding], list[tuple[int, int]]]:
    """Dark, washed-out and flat runs; with the analysis ``thumbs``, a flat frame whose edges
    are crisp (CRISP_EDGE) is a plain scene, not one hidden."""
    dark = sig.brightness < DARK_LEVEL
    bright = sig.brightness > BRIGHT_LEVEL
    usual = float(np.median(sig.contrast)) if sig.contrast.size else 0.0
    flat = (sig.contrast < LOW_CONTRAST) & (
        (sig.contrast < FLAT_SHARE * usual) | (sig.contrast < VERY_FLAT)
    )
    if thumbs is not None:
        for i in np.flatnonzero(flat):
            flat[i] = edge_strength(thumbs[int(i)]) < CRISP_EDGE
    runs = _long_enough(true_runs(dark | bright | flat), sig.times_s, fps)
    events = []
    for s, e in runs:
        seg = slice(s, e + 1)
        level, contrast = float(sig.brightness[seg].mean()), float(sig.contrast[seg].mean())
        kind = (
            "dark"
            if dark[seg].mean() >= 0.5
            else "washed out"
            if bright[seg].mean() >= 0.5
            else "flat (no contrast)"
        )
        conf = (
            _margin_confidence(level, DARK_LEVEL, higher_is_worse=False) if kind == "dark" else 0.7
        )
        events.append(
            pixel_finding(
                "low_visibility",
                sig.times_s[s],
                sig.times_s[e],
                f"the frames are {kind} for {sig.times_s[e] - sig.times_s[s] + 1 / fps:.1f} s",
                [
                    f"brightness={level:.1f} (dark<{DARK_LEVEL:g}, bright>{BRIGHT_LEVEL:g})",
                    f"contrast={contrast:.1f} (flat<{LOW_CONTRAST:g} and <{FLAT_SHARE:g}x the "
                    f"clip's {usual:.1f}, or <{VERY_FLAT:g})",
                ],
                conf,
            )
        )
    return events, runs


def blur(
    sig: SignalSeries, fps: float, exclude: list[tuple[int, int]]
) -> tuple[list[PixelFinding], list[tuple[int, int]]]:
    reference = float(np.median(sig.sharpness))
    if reference <= 0:
        return [], []
    ratio = sig.sharpness / reference
    soft = ratio < BLUR_RATIO
    for s, e in exclude:  # darkness or shaking explain softness on their own
        soft[max(0, s - 1) : e + 2] = False
    runs = _long_enough(true_runs(soft), sig.times_s, fps)
    events = []
    for s, e in runs:
        worst = float(ratio[s : e + 1].min())
        events.append(
            pixel_finding(
                "blur",
                sig.times_s[s],
                sig.times_s[e],
                "the frames lose sharpness: edges of robot and objects cannot be made out",
                [f"sharpness ratio to clip median={worst:.3f} (blur<{BLUR_RATIO:g})"],
                _margin_confidence(worst, BLUR_RATIO, higher_is_worse=False),
            )
        )
    return events, runs


def _off_glitches(sig: SignalSeries, glitches_s: Sequence[tuple[float, float]]) -> np.ndarray:
    """The camera's shifts with glitched frames taken off its path: a frame from elsewhere or a
    torn one pulls the view away and back, which the camera never did, and the optical flow into
    and out of it measures nothing. The steps into and out of the glitch take the mean of the
    steps around them."""
    shift = sig.shifts.copy()
    for a, b in glitches_s:
        inside = np.flatnonzero((sig.times_s >= a - 1e-6) & (sig.times_s <= b + 1e-6))
        if inside.size:
            lo, hi = int(inside[0]), min(int(inside[-1]) + 1, len(shift) - 1)
            around = [k for k in (lo - 1, hi + 1) if 1 <= k < len(shift)]
            shift[lo : hi + 1] = shift[around].mean(axis=0) if around else 0.0
    return shift


def camera_shake(
    sig: SignalSeries,
    every_frame: FrameSteps | None = None,
    glitches_s: Sequence[tuple[float, float]] = (),
    thumbs: Frames | None = None,
) -> tuple[list[PixelFinding], list[tuple[int, int]]]:
    """Shaking found on analysis frames; its span reaches the decoded frames between them
    (``every_frame``) that jump as much. An episode that is gone once the glitched frames
    (``glitches_s``, spans in seconds) are taken off the camera's path was the glitch; one that
    stays is shaking, whose frames often pass the glitch test too. With the analysis frames'
    ``thumbs``, an episode whose large shifts aligning the frames does not confirm is something
    moving in the scene, not the camera (``camera_confirms``)."""
    shift = sig.shifts
    size = np.linalg.norm(shift, axis=1)
    shaking = shaking_frames(shift)
    if glitches_s and shaking.any():
        without = shaking_frames(_off_glitches(sig, glitches_s))
        for s, e in true_runs(shaking):
            if not without[s : e + 1].any():
                shaking[s : e + 1] = False
    if thumbs is not None:
        for s, e in true_runs(shaking):
            large = [i for i in range(max(s, 1), e + 1) if size[i] > SHAKE_SHIFT_PX]
            if not camera_confirms(thumbs, shift, large):
                shaking[s : e + 1] = False
    events, runs = [], []
    reach = float(np.median(np.diff(sig.times_s))) if len(sig.times_s) > 1 else 0.0
    typical = typical_step(every_frame) if every_frame is not None else 0.0
    for s, e in true_runs(shaking):
        runs.append((s, e))
        peak = float(size[s : e + 1].max())
        # shift[i] is the motion from frame i-1 to i, so the first shifted index is the first
        # displaced frame and the last one is the frame that moved back into place.
        start, end = widened_to_frames(
            every_frame, float(sig.times_s[s]), float(sig.times_s[max(s, e - 1)]), reach, typical
        )
        events.append(
            pixel_finding(
                "camera_instability",
                start,
                end,
                "the whole view shakes back and forth although the camera should be still",
                [
                    f"camera shift up to {peak:.1f} px/frame (shift>{SHAKE_SHIFT_PX:g})",
                    f"{e - s + 1} frames shifted back and forth about the camera's smooth path",
                ],
                _margin_confidence(peak, SHAKE_SHIFT_PX * 2),
            )
        )
    return events, runs


def cuts(
    frames: AnalysisFrames, sig: SignalSeries, exclude: list[tuple[int, int]]
) -> tuple[list[PixelFinding], list[tuple[int, int]]]:
    """A persistent jump of the whole picture to another view (glitches, which come back, are
    found on every frame by ``gaze.pixels.frame_events``)."""
    events, spans = [], []
    for i in range(1, len(frames.times_s)):
        if sig.changed_fraction[i] < GLITCH_CHANGED_FRACTION or near(i, exclude):
            continue
        lighting = abs(sig.brightness[i] - sig.brightness[i - 1]) >= CUT_BRIGHTNESS_DELTA
        panning = float(np.hypot(sig.shift_x[i], sig.shift_y[i])) > SHAKE_SHIFT_PX
        if lighting or panning:
            continue
        spans.append((i, i))
        events.append(
            pixel_finding(
                "camera_instability",
                sig.step_start_s[i],
                sig.times_s[i],
                "the whole image jumps to a different view between two frames (a cut)",
                [
                    f"changed pixels={sig.changed_fraction[i]:.2f} "
                    f"(>{GLITCH_CHANGED_FRACTION:g}), not returning"
                ],
                0.6,
                severity=3,
            )
        )
    return events, spans


def _local_events(
    changes: list[LocalChange], sig: SignalSeries, steps: FrameSteps | None = None
) -> list[PixelFinding]:
    """One event per (type, step): several regions changing at once are one event, put on the
    exact decoded frame of the change where the every-frame steps can tell it."""
    grouped: dict[tuple[str, int], list[LocalChange]] = {}
    for change in changes:
        grouped.setdefault((change.type, change.index), []).append(change)
    events = []
    for (ftype, i), group in grouped.items():
        first = group[0]
        description = (
            first.description
            if len(group) == 1
            else f"{len(group)} regions at once: " + "; ".join(c.description for c in group)
        )
        evidence = [e for c in group for e in c.evidence]
        # the picture before a step is shown until the step starts (repeats included)
        start, end = float(sig.step_start_s[i]), float(sig.times_s[i])
        # only the regions at the change itself: tracked boxes lie on other frames
        at_step = [box for c in group for j, box, _ in c.boxes if j in (i - 1, i)]
        k = exact_frame(steps, start, end, at_step)
        if k is not None and steps is not None:
            start, end = float(steps.times_s[k - 1]), float(steps.times_s[k])
            evidence.append("the change falls on one decoded frame (every-frame steps)")
        # the frame before the step is shown until the change, the frame after from it on;
        # tracked boxes sit on their own analysis frames
        shown = {i - 1: start, i: end}
        regions = [
            PixelRegion(round(shown.get(j, float(sig.times_s[j])), 6), box, label)
            for c in group
            for j, box, label in c.boxes
        ]
        events.append(
            pixel_finding(
                ftype,
                start,
                end,
                description,
                evidence,
                max(c.confidence for c in group),
                regions=regions,
            )
        )
    return events


def _span_indices(
    spans: list[tuple[int, int]], source: SignalSeries, target: SignalSeries
) -> list[tuple[int, int]]:
    """Re-express frame spans of one series as spans of another (by time)."""
    out = []
    for s, e in spans:
        lo = int(np.searchsorted(target.times_s, source.times_s[s], side="left"))
        hi = int(np.searchsorted(target.times_s, source.times_s[e], side="right")) - 1
        if hi >= lo:
            out.append((lo, hi))
    return out


def _seconds(spans: list[tuple[int, int]], sig: SignalSeries) -> list[tuple[float, float]]:
    return [(float(sig.step_start_s[s]), float(sig.times_s[e])) for s, e in spans]


def _indices(spans_s: list[tuple[float, float]], sig: SignalSeries) -> list[tuple[int, int]]:
    """Analysis steps whose interval (step start, frame time] overlaps a span in seconds."""
    out = []
    for a, b in spans_s:
        hits = np.flatnonzero((sig.step_start_s <= b + 1e-6) & (sig.times_s >= a - 1e-6))
        if hits.size:
            out.append((int(hits[0]), int(hits[-1])))
    return out


def _not_object_changes(
    frame_level: FrameLevel, changes: list[LocalChange], sig: SignalSeries, steps: FrameSteps
) -> list[PixelFinding]:
    """The freezes whose catch-up is an object event instead. An object that jumps elsewhere, or
    appears, while the scene holds still shows, frame by frame, repeats and then a jump; the
    local-change rules say what it is when the scene slowed into the repeats (the step in is
    below STALL_ABRUPT of the larger of the two before it; a real freeze stops the picture at
    speed), its places were still beside the motion that slowed on the frames just before
    them, and nothing else moved in the jump (no cell outside its places changes by
    CATCH_UP_MOVED). Where the thing was itself moving before the picture stopped, or the arm
    jumps with it, the picture froze: after a real freeze the arm may have put down, covered or
    uncovered something still (forge v2 seed 4949 clip 96: a block put down while the picture
    was frozen appears at the catch-up, and the arm's cells change by up to 72 grey levels)."""
    if steps.cells is None:
        return frame_level.freezes
    kept = []
    step = steps.diff[:, 0]
    for event, (first, jump) in zip(frame_level.freezes, frame_level.frames, strict=True):
        slowed = first >= 3 and step[first] < STALL_ABRUPT * max(step[first - 2 : first])
        if not (
            slowed
            and jump is not None
            and any(_jumped_beside_a_hold(c, jump, first, sig, steps) for c in changes)
        ):
            kept.append(event)
    return kept


def _jumped_beside_a_hold(
    change: LocalChange, jump: int, first: int, sig: SignalSeries, steps: FrameSteps
) -> bool:
    """Whether ``change`` is an object jump at the decoded frame ``jump`` (OBJECT_JUMPS), alone
    in changing there, whose places were still, beside the motion, on the frames up to
    ``first`` (the last one before the repeats)."""
    if change.type not in OBJECT_JUMPS:
        return False
    i = change.index
    if not sig.times_s[i - 1] < steps.times_s[jump] <= sig.times_s[i] + 1e-6:
        return False
    assert steps.cells is not None
    places = [box for j, box, _ in change.boxes if j in (i - 1, i)]
    if steps.step_elsewhere(jump, places) >= CATCH_UP_MOVED:
        return False
    return all(
        steps.local_step(k, box) <= CHANGE_AWAY_FROM_MOTION * float(steps.cells[k].max())
        for box in places
        for k in range(max(1, first - 2), first + 1)
    )


def detect(frames: AnalysisFrames, sig: SignalSeries) -> list[Event]:
    """All candidate events of one clip, sorted by start time."""
    return events_of(findings(frames, sig))


def findings(frames: AnalysisFrames, sig: SignalSeries) -> list[PixelFinding]:
    """All candidate events of one clip as findings, sorted by start time (what the decoding
    child sends: it makes no report models)."""
    analysis_fps = 1.0 if len(sig.times_s) < 2 else 1.0 / float(np.median(np.diff(sig.times_s)))
    dark_events, dark_runs = low_visibility(sig, analysis_fps, frames.thumbs)
    # Motion is judged between distinct pictures when the clip repeats most of its frames.
    reduced = distinct_steps(frames, sig, SAME_PICTURE_DIFF)
    motion_frames, motion_sig = reduced if reduced else (frames, sig)
    dark_runs_m = _span_indices(dark_runs, sig, motion_sig)
    # a glitch (a foreign or torn frame) during a pan jumps the view out and back: found first,
    # so that it is not taken for the camera shaking
    glitches_s = glitch_spans(frames.steps, _seconds(dark_runs, sig))
    shake_events, shake_runs_m = camera_shake(
        motion_sig, frames.steps, glitches_s, motion_frames.thumbs
    )
    shake_runs = _span_indices(shake_runs_m, motion_sig, sig)
    blur_events, blur_runs = blur(sig, analysis_fps, dark_runs + shake_runs)
    explained_s = _seconds(dark_runs + blur_runs + shake_runs, sig)
    frame_level = (
        frame_events(frames.steps, explained_s) if frames.steps is not None else FrameLevel()
    )
    busy = dark_runs_m + shake_runs_m + _span_indices(blur_runs, sig, motion_sig)
    busy += _indices(FrameLevel.spans(frame_level.glitches), motion_sig)
    frozen = _indices(FrameLevel.spans(frame_level.freezes), motion_sig)
    cut_events, cut_spans = cuts(motion_frames, motion_sig, busy + frozen)
    changes = local_changes(motion_frames, motion_sig, exclude=busy + cut_spans)
    freezes = (
        _not_object_changes(frame_level, changes, motion_sig, frames.steps)
        if frames.steps is not None
        else []
    )
    # beside a freeze, local changes are the world catching up; in a stutter, double steps
    frozen = _indices(FrameLevel.spans(freezes + frame_level.stutters), motion_sig)
    changes = [c for c in changes if not near(c.index, frozen, margin=1)]
    events = (
        dark_events
        + shake_events
        + blur_events
        + frame_level.glitches
        + freezes
        + frame_level.stutters
        + cut_events
        + _local_events(changes, motion_sig, frames.steps)
    )
    return sorted(events, key=lambda ev: (ev.start_s, ev.type))
