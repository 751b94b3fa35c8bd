"""Where one analysis step changed: compact regions, how much each stands out from the background
its surroundings predict before and after the step, and how steady the steps either side are
around it. ``gaze.pixels.local_change`` judges them (vanishing, appearing, jumping).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from gaze.pixels.frame_area import Box
from gaze.pixels.motion import AlignedStep, aligned_step
from gaze.pixels.signals import SignalSeries
from gaze.video.clip import AnalysisFrames

LOCAL_MIN_AREA = 0.0015
"""Smallest changed region, as a fraction of the frame (a 16 px block in 320x240 is ~0.003)."""
LOCAL_STABLE = 0.25
"""A region is stable in a neighbouring step when the pixels changing in and around it number at
most this share of its area."""
PARTNER_STABLE = 0.75
"""A region changing more than LOCAL_STABLE around it in a neighbouring step (an encoder's
speckle beside a small object, the arm passing near) is no evidence on its own, but it may be
the other half of a teleport whose first half is stable: a vanishing and an appearing of the
same colour in one step, when the changes around this one number at most this share of its area.
Without it a teleport whose half sat beside a little noise was reported as a lone vanishing or
appearing (forge v2 seeds 707, 808, 909, 1: 19-90 changed pixels against 16-76 allowed)."""
SETTLING_INSIDE = 0.1
"""An appearing region may change more than LOCAL_STABLE around it in the step after, up to
SETTLING_AROUND, when at least this share of its own area changes again in that step: a
low-quality encoder refines a new object over the next frame or two, where something moving
near the place changes around it, not inside..."""
SETTLING_AROUND = 0.6
SETTLING_CALM = 0.1
"""...and when nothing changed around it in the step before (at most this share of its area):
a thing the arm brought, or one coming into view, has motion beside it before it shows."""
TOUCHED_PRESENCE = 1.2
"""A region that changed more than LOCAL_STABLE in the step before may still vanish when that
change fell inside it (at least SETTLING_INSIDE of its area, little around it) and left it
standing out as much as before, within this factor either way: an encoder touching an object
that is still there (forge v2 seeds 2525-4444: 7 of the 8 disappearances missed, 0.98-1.11), where
an object arriving or changing there moves its presence by a third or more (1.38-1.51)..."""
TOUCHED_GONE = 0.25
"""...and when the place then shows background clearly, at most this share of what it was (the
7: 0.02-0.2; a zoom's false alarm on a clean clip: 0.38)."""
MIN_SOLIDITY = 0.4
"""Changed area / bounding-box area: objects are compact; motion onsets leave thin strips."""
MIN_ASPECT = 0.4
"""Short side / long side of a changed region: the edge that a moving arm, its shadow or a pan
exposes is a strip, while the objects a robot handles seldom are (forge v2's true object events
are >= 0.53). The price: a thin tool or a cable seen lengthwise appearing or vanishing is not
reported."""
RING_PX = 4
"""Radius of surroundings used to predict the background of a region, thumbnail px."""


@dataclass(eq=False)
class Region:
    mask: np.ndarray
    box: Box
    """The changed area's bounding box, as fractions of the frame's width and height."""
    centre: tuple[float, float]
    before: float
    after: float
    colour_before: np.ndarray
    colour_after: np.ndarray
    steady: bool = True
    """Stable in the steps either side (LOCAL_STABLE); an unsteady region may only complete a
    teleport (PARTNER_STABLE)."""
    settling: bool = False
    """Calm in the step before (SETTLING_CALM), and part of the change in the step after falls
    inside the region itself (SETTLING_INSIDE): an encoder refining what just appeared."""
    touched: float | None = None
    """When it is unsteady only because the step before changed the region itself
    (TOUCHED_PRESENCE): how much it stood out a frame before that step."""
    beside: float = 0.0
    """Change in the same step right around the region, in multiples of its own area: a
    thing carried by a moving gripper leaves its place amid the gripper's own change."""


class ChangeSteps:
    """Aligned changes between consecutive analysis frames, computed once each on demand. The
    scan moves forward and looks one step either side, so only the steps near the latest one
    asked for are kept: memory does not grow with the clip (every step kept was 58 KB of a
    720p clip's thumbnails, 170 MB over five minutes)."""

    KEEP = 3

    def __init__(self, frames: AnalysisFrames, sig: SignalSeries | None = None) -> None:
        self.thumbs = frames.thumbs
        self.flow = None if sig is None else sig.shifts
        self.cache: dict[int, AlignedStep] = {}

    def __len__(self) -> int:
        return len(self.thumbs)

    def __getitem__(self, i: int) -> AlignedStep:
        """The step from frame i-1 to frame i."""
        if i not in self.cache:
            flow = None if self.flow is None else (float(self.flow[i, 0]), float(self.flow[i, 1]))
            self.cache[i] = aligned_step(self.thumbs[i - 1], self.thumbs[i], flow)
            for old in [k for k in self.cache if k < i - self.KEEP]:
                del self.cache[old]
        return self.cache[i]


def presence(frame: np.ndarray, mask: np.ndarray) -> tuple[float, np.ndarray]:
    """How much the region stands out from the background its surroundings predict.

    The background is predicted by inpainting the region from its surroundings (on a crop), so
    structure running through the region (a table edge, a wall line) does not count as an object.
    Returns the mean colour distance and the region's median colour.
    """
    ys, xs = np.nonzero(mask)
    pad = RING_PX + 2
    y0, y1 = max(0, ys.min() - pad), min(mask.shape[0], ys.max() + pad + 1)
    x0, x1 = max(0, xs.min() - pad), min(mask.shape[1], xs.max() + pad + 1)
    crop, region = frame[y0:y1, x0:x1], mask[y0:y1, x0:x1]
    hole = cv2.dilate(region.astype(np.uint8), np.ones((3, 3), np.uint8), iterations=1)
    predicted = cv2.inpaint(crop, hole, RING_PX, cv2.INPAINT_TELEA)
    diff = crop[region].astype(np.float32) - predicted[region].astype(np.float32)
    return float(np.linalg.norm(diff, axis=1).mean()), np.median(crop[region], axis=0)


def _touched(
    steps: ChangeSteps, i: int, mask: np.ndarray, nearby: int, before: float
) -> float | None:
    """How much the region of step i stood out in frame i-2 (where the camera had it), when step
    i-1 changed the region itself, and little around it (``nearby`` changed pixels in and around
    it), and left it standing out as much (TOUCHED_PRESENCE); else None."""
    inside = int(steps[i - 1].changed[mask].sum())
    area = int(mask.sum())
    if inside < SETTLING_INSIDE * area or nearby - inside > LOCAL_STABLE * area:
        return None
    dx, dy = steps[i].shift
    carry = np.array([[1, 0, -dx], [0, 1, -dy]], dtype=np.float32)
    h, w = mask.shape
    earlier = cv2.warpAffine(mask.astype(np.uint8), carry, (w, h), flags=cv2.INTER_NEAREST) > 0
    if not earlier.any():
        return None
    two_back, _ = presence(steps[i - 1].earlier, earlier)
    return two_back if before / TOUCHED_PRESENCE <= two_back <= before * TOUCHED_PRESENCE else None


def changed_regions(steps: ChangeSteps, i: int) -> list[Region]:
    """The compact regions step i changed (not strips, not too small, not amid more change in
    the steps either side than PARTNER_STABLE allows), each with how much it stands out before
    and after the step and how steady those steps are around it."""
    thumbs, step = steps.thumbs, steps[i]
    raw = step.changed.astype(np.uint8)
    opened = cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    change = np.asarray(cv2.morphologyEx(opened, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)))
    count, labels, stats, centroids = cv2.connectedComponentsWithStats(change, connectivity=8)
    min_area = LOCAL_MIN_AREA * change.size
    before_pair = steps[i - 1].changed if i >= 2 else None
    after_pair = steps[i + 1].changed if i + 1 < len(steps) else None
    out = []
    for label in range(1, count):
        area = stats[label, cv2.CC_STAT_AREA]
        bbox_area = stats[label, cv2.CC_STAT_WIDTH] * stats[label, cv2.CC_STAT_HEIGHT]
        if area < min_area or area < MIN_SOLIDITY * bbox_area:
            continue
        sides = sorted((stats[label, cv2.CC_STAT_WIDTH], stats[label, cv2.CC_STAT_HEIGHT]))
        if sides[0] < MIN_ASPECT * sides[1]:  # a strip: an exposed edge, not an object
            continue
        mask = labels == label
        # Look for change around the region too: a small part moving fast (a joint, a finger)
        # leaves disjoint change regions, but always next to where it was a step before.
        reach = int(max(stats[label, cv2.CC_STAT_WIDTH], stats[label, cv2.CC_STAT_HEIGHT]) // 2 + 2)
        around = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8), iterations=reach) > 0
        nearby_before = 0 if before_pair is None else int(before_pair[around].sum())
        nearby_after = 0 if after_pair is None else int(after_pair[around].sum())
        nearby = max(nearby_before, nearby_after)
        if nearby > PARTNER_STABLE * area:
            continue
        before, colour_before = presence(step.earlier, mask)
        after, colour_after = presence(thumbs[i], mask)
        h, w = mask.shape
        x, y = stats[label, cv2.CC_STAT_LEFT], stats[label, cv2.CC_STAT_TOP]
        bw, bh = stats[label, cv2.CC_STAT_WIDTH], stats[label, cv2.CC_STAT_HEIGHT]
        box = (
            round(x / w, 4),
            round(y / h, 4),
            round((x + bw) / w, 4),
            round((y + bh) / h, 4),
        )
        steady = nearby <= LOCAL_STABLE * area
        settling = (
            nearby_before <= SETTLING_CALM * area
            and nearby_after <= SETTLING_AROUND * area
            and after_pair is not None
            and int(after_pair[mask].sum()) >= SETTLING_INSIDE * area
        )
        vanishing_clearly = after <= TOUCHED_GONE * before and nearby_after <= LOCAL_STABLE * area
        touched = (
            _touched(steps, i, mask, nearby_before, before)
            if not steady and before_pair is not None and vanishing_clearly
            else None
        )
        centre = tuple(centroids[label])
        out.append(
            Region(
                mask,
                box,
                centre,
                before,
                after,
                colour_before,
                colour_after,
                steady=steady,
                settling=settling,
                touched=touched,
                beside=float(raw[around & ~mask].sum()) / area,
            )
        )
    return out
