"""Local, sudden appearance and disappearance of regions (objects vanishing, appearing, jumping).

A region qualifies when it changes between frames i-1 and i but is stable in the pairs just before
and after: continuous motion (an arm moving, an object carried) changes the same pixels frame after
frame and is ignored. A region "holds an object" when it stands out from the background that its
surroundings predict (inpainting); one that held an object and no longer does has vanished, the
converse has appeared. A vanished and an appeared region of similar colour in the same step is a
teleport.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gaze.pixels.change_regions import (
    PARTNER_STABLE,
    ChangeSteps,
    Region,
    changed_regions,
)
from gaze.pixels.frame_area import Box, picture_box
from gaze.pixels.runs import near
from gaze.pixels.signals import SignalSeries
from gaze.pixels.track import TRACK_S, follow
from gaze.video.clip import AnalysisFrames

LOCAL_MAX_FRACTION = 0.2
"""Above this share of changed pixels the change is global, not local."""
PRESENT_DISTANCE = 30.0
"""Colour distance to the surrounding ring above which a region holds an object."""
ABSENT_RATIO = 0.5
"""A region shows background once its distance to the ring falls below this share of what it was
with the object (relative, because codecs leave a fading ghost for a frame or two)."""
SHADOW_CHROMA = 0.04
"""A region whose colour keeps its chromaticity ((b, g, r) / (b + g + r), summed absolute
difference below this)..."""
SHADOW_DARKER = 0.85
"""...while its brightness falls below this share (appearing) or rises from below it
(vanishing) is a shadow or a crease coming or going, not an object: a towel pinched by the
gripper, the arm's shadow on the table. The price: an object of the very hue of the surface
under it, only darker, is taken for a shadow."""
SHADOW_DEEPEST = 0.4
"""...and not below this share: a shadow is the surface lit by the room's other light, an object
without a hue (black, grey, white) is its own colour; without this bound a black thing
vanishing from a grey table was taken for a shadow leaving it (a black disc on forge v2's fixed
stage: 0.24x the table's brightness; forge's own shadows darken to 0.65x)."""
SAME_OBJECT_DISTANCE = 60.0
"""Mean colour distance under which a vanished and an appeared region are the same object."""
TWIN_DISTANCE = 20.0
"""In a busy picture the other half of a jump may land on (or leave) a spot that stands out from
its surroundings itself, so it fails the absent test. A steady region whose own colour turns
into (or away from) the colour of a found half's object, within this distance, and changes by
at least SAME_OBJECT_DISTANCE doing so, is that half (real clips of two DreamDojo renders and a
DROID comparison, ``bench/probe_real.py``); each is taken only beside a found half of its
colour, and one left unpaired makes no event."""
EDGE_MARGIN = 0.02
"""A region this close to the picture's border (fraction of width or height) may have come from
or gone to outside the view: the robot's arm or gripper entering, an object carried out. Its
appearing or vanishing there is no evidence of a failure, so it is not reported. The picture is
the frame, or the pane inside a clip's flat margins (``gaze.pixels.frame_area``)."""


CARRIED_BESIDE = 0.5
"""Most change in the same step right around a region that vanishes or appears alone, in
multiples of its own area (``Region.beside``); more is something moving there: a gripper
carrying it (RoboTwin's mug at 10 fps: 0.97). Forge v2's injected disappearances and
appearances have at most 0.05 around them. A jump whose two halves both sit amid more is an
arm moving in large steps (UniSim's long-horizon clip, whose pictures change every fifth
frame: 1.33 and 1.79 around the halves of a "jump" along the arm)."""


@dataclass
class LocalChange:
    index: int
    type: str
    description: str
    evidence: list[str] = field(default_factory=list)
    confidence: float = 0.5
    boxes: list[tuple[int, Box, str]] = field(default_factory=list)
    """(analysis frame index, box as fractions of the frame, what it shows) for each region."""


def _shadow(dark: np.ndarray, lit: np.ndarray) -> bool:
    """Whether ``dark`` is ``lit`` in shadow: the same chromaticity, clearly less bright, but
    not as dark as a thing of its own (SHADOW_DEEPEST)."""
    dark, lit = dark.astype(np.float64) + 1.0, lit.astype(np.float64) + 1.0
    chroma = float(np.abs(dark / dark.sum() - lit / lit.sum()).sum())
    ratio = float(dark.sum() / lit.sum())
    return chroma < SHADOW_CHROMA and SHADOW_DEEPEST <= ratio < SHADOW_DARKER


def _at_border(box: Box, picture: Box) -> bool:
    """Whether a region touches the picture's edge (the frame's, or an inset pane's)."""
    x0, y0, x1, y1 = box
    px0, py0, px1, py1 = picture
    return (
        x0 <= px0 + EDGE_MARGIN
        or y0 <= py0 + EDGE_MARGIN
        or x1 >= px1 - EDGE_MARGIN
        or y1 >= py1 - EDGE_MARGIN
    )


def _back(box: Box, shift: tuple[float, float], width: int, height: int) -> Box:
    """A box found in frame i's coordinates, where it was in frame i-1 (before the camera's
    shift), kept inside the frame."""
    dx, dy = shift[0] / width, shift[1] / height
    x0, y0, x1, y1 = box
    return (
        round(min(max(x0 - dx, 0.0), 1.0), 4),
        round(min(max(y0 - dy, 0.0), 1.0), 4),
        round(min(max(x1 - dx, 0.0), 1.0), 4),
        round(min(max(y1 - dy, 0.0), 1.0), 4),
    )


def _describe(region: Region, width: int) -> str:
    x = region.centre[0] / width
    side = "left" if x < 1 / 3 else "right" if x > 2 / 3 else "centre"
    return f"{side} of the frame"


def local_changes(
    frames: AnalysisFrames, sig: SignalSeries, exclude: list[tuple[int, int]]
) -> list[LocalChange]:
    """Sudden local appearances, disappearances and jumps, one step at a time, judged after
    taking out the camera's own motion (``gaze.pixels.motion``)."""
    width, height = frames.thumbs.shape[2], frames.thumbs.shape[1]
    picture = picture_box(frames.thumbs)
    steps = ChangeSteps(frames, sig)
    found: list[LocalChange] = []
    for i in range(1, len(frames.thumbs)):
        if sig.changed_fraction[i] <= 0 or near(i, exclude, margin=1):
            continue
        step = steps[i]
        moved = step.shift != (0.0, 0.0)
        fraction = float(step.changed.mean()) if moved else sig.changed_fraction[i]
        if fraction <= 0 or fraction > LOCAL_MAX_FRACTION:
            continue
        regions = [r for r in changed_regions(steps, i) if not _at_border(r.box, picture)]
        vanished = [
            r
            for r in regions
            if r.before > PRESENT_DISTANCE
            and r.after < ABSENT_RATIO * r.before
            and not _shadow(dark=r.colour_before, lit=r.colour_after)
        ]
        appeared = [
            r
            for r in regions
            if r.after > PRESENT_DISTANCE
            and r.before < ABSENT_RATIO * r.after
            and not _shadow(dark=r.colour_after, lit=r.colour_before)
        ]
        weak = _other_halves(regions, vanished, appeared)
        for gone, twin in _teleports(vanished, appeared):
            vanished.remove(gone)
            appeared.remove(twin)
            if min(gone.beside, twin.beside) > CARRIED_BESIDE:
                continue
            distance = float(np.hypot(*(np.subtract(twin.centre, gone.centre)))) / width
            found.append(
                LocalChange(
                    i,
                    "object_teleportation",
                    f"a region at the {_describe(gone, width)} vanishes and a region of the same "
                    f"colour appears at the {_describe(twin, width)} in one step",
                    [
                        f"jump of {distance:.2f} frame widths between two frames",
                        "colour distance to background before/after: "
                        f"{gone.before:.0f}->{gone.after:.0f} and "
                        f"{twin.before:.0f}->{twin.after:.0f}",
                        *_unsteady_half(gone, twin),
                    ],
                    confidence=0.7,
                    boxes=[
                        (i - 1, _back(gone.box, step.shift, width, height), "before"),
                        (i, twin.box, "after"),
                    ],
                )
            )
        vanished = [r for r in vanished if id(r) not in weak]  # unpaired: no event alone
        appeared = [r for r in appeared if id(r) not in weak]
        appeared = [
            r for r in appeared if r.steady or (r.settling and not _same_colour(r, vanished))
        ]
        vanished = [r for r in vanished if r.steady or r.touched is not None]
        # amid as much change right around it in the same step, a thing is carried, pushed or
        # uncovered by what moves there, not gone or come by itself
        vanished = [r for r in vanished if r.beside <= CARRIED_BESIDE]
        appeared = [r for r in appeared if r.beside <= CARRIED_BESIDE]
        for r in vanished:
            found.append(
                LocalChange(
                    i,
                    "object_disappearance",
                    f"something at the {_describe(r, width)} vanishes in one step; "
                    "the place now shows background",
                    [
                        f"colour distance to surroundings {r.before:.0f}->{r.after:.0f} "
                        f"(object>{PRESENT_DISTANCE:g}, then <{ABSENT_RATIO:g}x)",
                        (
                            "region stable before and after the step"
                            if r.touched is None
                            else "region stable after the step; in the step before it changes "
                            f"inside, not around, and stands out as much ({r.touched:.0f} a frame "
                            "earlier: the encoder touching an object still there)"
                        ),
                    ],
                    confidence=0.6,
                    boxes=[(i - 1, _back(r.box, step.shift, width, height), "before")],
                )
            )
        for r in appeared:
            found.append(
                LocalChange(
                    i,
                    "object_hallucination",
                    f"something appears at the {_describe(r, width)} in one step, "
                    "brought by nothing visible",
                    [
                        f"colour distance to surroundings {r.before:.0f}->{r.after:.0f} "
                        f"(object>{PRESENT_DISTANCE:g}, before <{ABSENT_RATIO:g}x)",
                        (
                            "region stable before and after the step"
                            if r.steady
                            else "nothing moved around the region in the step before; in the "
                            "step after it changes inside (the encoder refining a new object)"
                        ),
                    ],
                    confidence=0.6,
                    boxes=[(i, r.box, "after")],
                )
            )
    _track(found, frames)
    return found


def _teleports(vanished: list[Region], appeared: list[Region]) -> list[tuple[Region, Region]]:
    """(vanished, appeared) pairs of the same colour (SAME_OBJECT_DISTANCE), each region in one
    pair at most: steady halves pair first, closest colour first; then a steady half left alone
    pairs with an unsteady one (PARTNER_STABLE). Two unsteady halves make no teleport."""
    pairs: list[tuple[Region, Region]] = []
    used: set[int] = set()
    for steady_only in (True, False):
        for gone in vanished:
            if id(gone) in used or (steady_only and not gone.steady):
                continue
            twins = [
                r
                for r in appeared
                if id(r) not in used and (r.steady if steady_only else r.steady != gone.steady)
            ]
            gaps = [_colour_gap(gone, r) for r in twins]
            if not gaps or min(gaps) > SAME_OBJECT_DISTANCE:
                continue
            twin = twins[int(np.argmin(gaps))]
            used |= {id(gone), id(twin)}
            pairs.append((gone, twin))
    return pairs


def _other_halves(
    regions: list[Region], vanished: list[Region], appeared: list[Region]
) -> set[int]:
    """Add to ``vanished`` and ``appeared`` the steady regions that are the missing half of a
    found one's jump (TWIN_DISTANCE); returns their ids (they make no event on their own)."""
    added: set[int] = set()
    taken = {id(r) for r in vanished + appeared}
    for r in regions:
        if id(r) in taken or not r.steady:
            continue
        turned = float(np.linalg.norm(r.colour_after - r.colour_before))
        if turned < SAME_OBJECT_DISTANCE:
            continue
        if r.after > PRESENT_DISTANCE and any(
            g.steady and float(np.linalg.norm(r.colour_after - g.colour_before)) <= TWIN_DISTANCE
            for g in vanished
        ):
            appeared.append(r)
            added.add(id(r))
        elif r.before > PRESENT_DISTANCE and any(
            a.steady and float(np.linalg.norm(r.colour_before - a.colour_after)) <= TWIN_DISTANCE
            for a in appeared
            if id(a) not in added
        ):
            vanished.append(r)
            added.add(id(r))
    return added


def _colour_gap(gone: Region, twin: Region) -> float:
    """Colour distance between what vanished and what appeared (SAME_OBJECT_DISTANCE)."""
    return float(np.linalg.norm(twin.colour_after - gone.colour_before))


def _same_colour(twin: Region, vanished: list[Region]) -> bool:
    """Whether something of ``twin``'s colour vanished in the same step: a settling appearance
    is then one object moving (carried fast) or a teleport with no steady half, not a thing
    brought by nothing."""
    return any(_colour_gap(gone, twin) <= SAME_OBJECT_DISTANCE for gone in vanished)


def _unsteady_half(gone: Region, twin: Region) -> list[str]:
    if gone.steady and twin.steady:
        return []
    half = "vanishing" if twin.steady else "appearing"
    return [
        f"the {half} region changes a little in a neighbouring step too (<= {PARTNER_STABLE:g} "
        "of its area): it counts only as the other half of this jump"
    ]


def _track(found: list[LocalChange], frames: AnalysisFrames) -> None:
    """Add each region's box in the frames around the change that still show it (``track:``
    boxes): back in time from a ``before`` box, forward from an ``after`` box."""
    times = frames.times_s
    if len(times) < 2:
        return
    most = max(1, round(TRACK_S / float(np.median(np.diff(times)))))
    for change in found:
        tracked = []
        for j, box, label in change.boxes:
            direction = -1 if label == "before" else 1
            tracked += [
                (k, moved, f"track: {label}")
                for k, moved in follow(frames.thumbs, j, box, direction, most)
            ]
        change.boxes += tracked
