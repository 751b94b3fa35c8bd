"""Global camera motion between two analysis frames, so local changes are judged on aligned
pictures: a pan moves every textured pixel, and without alignment a vanishing object under a
moving camera hides in that change.

The camera's motion is the background's, not that of the largest moving thing: a shift is kept
only when the picture's structure moved with it (``background_moved``). The motion model is a
translation from phase correlation (a pan or drift of a few pixels per
analysis step; zooms are slow per step at these rates). It is used only when it explains the
picture: aligned, the changed area must shrink to at most ``KEEP_RATIO`` of the raw one, so a
large arm moving in front of a still camera cannot talk the aligner into a false shift. A shift
that the median optical flow confirms (``AGREE_PX``) need only shrink it at all: over a plain
scene, what changes during a pan can be most of the raw change. When phase correlation
disagrees with the flow (it can lock onto a large arm moving across a low-contrast scene), the
flow's own shift is tried, kept when it takes out at least a quarter of the change
(``FLOW_KEEP_RATIO``; a zoom, which no shift models, barely shrinks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from gaze.pixels.signals import CHANGE_LEVEL, channel_change
from gaze.video.spill import Frames

MIN_SHIFT_PX = 0.5
"""Below this the camera is taken as still and the frames are compared as they are."""
MIN_RESPONSE = 0.05
"""Phase-correlation peak strength under which the shift estimate is not trusted."""
KEEP_RATIO = 0.5
"""Alignment is kept only when it leaves at most this share of the raw changed pixels."""
AGREE_PX = 1.0
"""A shift within this many pixels of the camera motion that optical flow measured (its median
over the frame, which a moving arm does not sway) is kept whenever it shrinks the changed area
at all: in a steady pan over a plain scene, the arm and an object that appears can be more than
KEEP_RATIO of the raw change."""
FLOW_KEEP_RATIO = 0.75
"""The flow's own shift, tried when phase correlation disagrees with it, is kept when it leaves
at most this share of the raw changed pixels: on a pan it takes out the textured background's
change (0.56-0.58 of it on forge v2 seed 1010 clip 15), on a zoom, which no translation models,
it barely shrinks it (0.87-0.92 on seed 606 clip 36, where it hid an object appearing)."""
EDGE_PX = 2
"""Pixels next to the area the shifted frame does not cover are left out (interpolation)."""
BACKGROUND_SUPPORT = 0.5
"""Camera motion is the background's: of the pixels a shift would change in the earlier frame
(its edges and texture across the shift), at least this share must have changed. Over a flat
table under a still camera, a gripper sweeping about 4 px per step is the largest moving thing,
and a shift that follows it shrinks the change on its own (the flat table costs nothing to
shift); but the still objects' outlines, the table's edge and the wall did not move (forge v2's
fixed stage: 0.05-0.3 of them changed under the gripper's shift, 0.8-1.0 under a pan)..."""
MIN_STRUCTURE = 0.01
"""...judged when those pixels are at least this share of the frame (a plain picture has too
little structure to tell: the shift is then judged on the change alone, as before)..."""
TILES = 4
"""...and, since a large arm can hold most of those pixels itself, judged again place by place:
the frame cut into TILES x TILES tiles..."""
TILE_SUPPORT = 0.6
"""...at least this share of the tiles that hold structure (MIN_TILE_STRUCTURE) must have moved
(BACKGROUND_SUPPORT of their structure changed). A camera shift moves the whole picture; a
gripper moves the few tiles it crosses, and the still things in the others hold."""
MIN_TILE_STRUCTURE = 0.02
"""Share of a tile's pixels the shift must change for that tile to have a say."""


@dataclass
class AlignedStep:
    """The change from one analysis frame to the next, with the earlier frame in the later
    frame's coordinates."""

    earlier: np.ndarray
    """The earlier frame, shifted to line up with the later one (as it was when still)."""
    changed: np.ndarray
    """Bool mask of pixels that changed, in the later frame's coordinates."""
    shift: tuple[float, float]
    """Camera motion between the two, in thumbnail pixels (0, 0 when taken as still)."""


def _grey(frame: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)


def global_shift(earlier: np.ndarray, later: np.ndarray) -> tuple[float, float, float]:
    """``(dx, dy, response)``: the translation that carries ``earlier`` onto ``later``."""
    a, b = _grey(earlier), _grey(later)
    window = cv2.createHanningWindow((a.shape[1], a.shape[0]), cv2.CV_32F)
    (dx, dy), response = cv2.phaseCorrelate(a, b, window)
    return float(dx), float(dy), float(response)


def _aligned(
    earlier: np.ndarray, later: np.ndarray, dx: float, dy: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``earlier`` carried by (dx, dy), the pixels that still change against ``later`` (where
    the carried frame covers the picture), and that cover."""
    h, w = earlier.shape[:2]
    carry = np.array([[1, 0, dx], [0, 1, dy]], dtype=np.float32)
    moved = cv2.warpAffine(
        earlier, carry, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    footprint = cv2.warpAffine(
        np.ones((h, w), np.uint8), carry, (w, h), flags=cv2.INTER_NEAREST, borderValue=0
    )
    covered = np.asarray(cv2.erode(footprint, np.ones((3, 3), np.uint8), iterations=EDGE_PX)) > 0
    moved = np.asarray(moved)
    return moved, (channel_change(later, moved) > CHANGE_LEVEL) & covered, covered


def _structure(earlier: np.ndarray, moved: np.ndarray, covered: np.ndarray) -> np.ndarray:
    """The pixels the carrying itself changes: the structure a camera moving so would move."""
    structure: np.ndarray = (channel_change(earlier, moved) > CHANGE_LEVEL) & covered
    return structure


def _moved_share(raw: np.ndarray, structure: np.ndarray) -> float:
    """Share of the tiles with a say (MIN_TILE_STRUCTURE) whose structure moved; 1.0 when fewer
    than two tiles have one (nothing to compare)."""
    h, w = structure.shape
    votes = []
    for rows in np.array_split(np.arange(h), TILES):
        for cols in np.array_split(np.arange(w), TILES):
            tile = np.ix_(rows, cols)
            count = int(structure[tile].sum())
            if count >= MIN_TILE_STRUCTURE * rows.size * cols.size:
                votes.append(int((raw[tile] & structure[tile]).sum()) >= BACKGROUND_SUPPORT * count)
    return float(np.mean(votes)) if len(votes) >= 2 else 1.0


def background_moved(raw: np.ndarray, structure: np.ndarray) -> bool:
    """Whether the picture's structure moved as a camera shift would move it: BACKGROUND_SUPPORT
    of the pixels the shift changes (``structure``) changed between the frames (``raw``), and
    in TILE_SUPPORT of the tiles that hold any; a picture with less structure than
    MIN_STRUCTURE cannot tell and passes."""
    count = int(structure.sum())
    if count < MIN_STRUCTURE * structure.size:
        return True
    if int((raw & structure).sum()) < BACKGROUND_SUPPORT * count:
        return False
    return _moved_share(raw, structure) >= TILE_SUPPORT


def aligned_step(
    earlier: np.ndarray, later: np.ndarray, flow: tuple[float, float] | None = None
) -> AlignedStep:
    """The change from ``earlier`` to ``later``, camera motion taken out where it explains it
    (or where it agrees with ``flow``, the median optical flow between the two). When phase
    correlation locks onto something else (a large arm moving across a pan), the flow itself
    is tried."""
    raw = channel_change(later, earlier) > CHANGE_LEVEL
    if not raw.any():
        return AlignedStep(earlier, raw, (0.0, 0.0))
    dx, dy, response = global_shift(earlier, later)
    agrees = flow is not None and np.hypot(dx - flow[0], dy - flow[1]) <= AGREE_PX
    tries = []
    if np.hypot(dx, dy) >= MIN_SHIFT_PX and response >= MIN_RESPONSE:
        tries.append((dx, dy, 1.0 if agrees else KEEP_RATIO))
    if flow is not None and not agrees and np.hypot(*flow) >= MIN_SHIFT_PX:
        tries.append((flow[0], flow[1], FLOW_KEEP_RATIO))
    for x, y, keep in tries:
        moved, aligned, covered = _aligned(earlier, later, x, y)
        if aligned.sum() <= keep * raw.sum() and background_moved(
            raw, _structure(earlier, moved, covered)
        ):
            return AlignedStep(moved, aligned, (round(x, 3), round(y, 3)))
    return AlignedStep(earlier, raw, (0.0, 0.0))


CONFIRMED_SHARE = 0.5
"""Share of a run's large flow shifts that aligning the frames must confirm for the run to be
the camera moving."""


def camera_confirms(thumbs: Frames, shifts: np.ndarray, frames: Sequence[int]) -> bool:
    """Whether the median-flow shifts into ``frames`` are the camera's: aligning each frame with
    the one before takes out their change (``aligned_step`` keeps a shift) for at least
    CONFIRMED_SHARE of them. Over a low-texture table the dense flow spreads a fast arm's motion
    into the background, and its median can swing by several pixels while the camera stays put
    (forge v2 seed 2222 clip 35: 9.4 px, no alignment kept); a real shake is confirmed frame by
    frame."""
    if not frames:
        return True
    kept = sum(
        aligned_step(thumbs[i - 1], thumbs[i], (float(shifts[i, 0]), float(shifts[i, 1]))).shift
        != (0.0, 0.0)
        for i in frames
    )
    return kept >= CONFIRMED_SHARE * len(frames)
