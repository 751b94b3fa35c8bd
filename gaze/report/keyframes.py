"""The frames a reader needs to check a report by eye, as small JPEGs from one decoding pass:
each event's before / during / after, the frames its regions box and its evidence cites, and the
clip's sampled frames (what the model saw).

Times are resolved the way ``gaze.video.clip`` samples: a wanted time t shows the first frame
whose own time is at least t minus half a frame, so a strip frame is the very frame a window held.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gaze.errors import GazeInputError
from gaze.schema.events import Event
from gaze.video.clip import frame_time
from gaze.video.frames import data_url, encode_jpeg, resize_max_side
from gaze.video.reader import VideoReader

EVENT_SIDE = (480, 180)
"""Most width and height of an event's key frames, pixels (wide clips stay legible)."""
STRIP_SIDE = (192, 72)
"""Most width and height of a frame in the clip strip, pixels."""
JPEG_QUALITY = 68
MOST_PER_EVENT = 6
MOST_CITED = 2
CONTEXT_S = 0.25
"""How far before an event's start (and after its end) its 'before' and 'after' frames lie."""
_CITED = re.compile(r"(?<![\w.])(\d{1,5}(?:\.\d+)?)\s?s\b")


@dataclass(frozen=True)
class Box:
    """A normalised box drawn on a key frame, with what it shows."""

    box: tuple[float, float, float, float]
    label: str


@dataclass
class KeyFrame:
    """One frame shown for an event: why it is shown, and the boxes drawn on it."""

    t_s: float
    role: str  # before, during, after, a region's label, or "cited"
    boxes: list[Box] = field(default_factory=list)
    optional: bool = False
    """Only drawn on a frame shown anyway (a tracked box), never a frame of its own."""


def cited_times(texts: Iterable[str], duration_s: float) -> list[float]:
    """Times written in free text as ``3.2 s`` or ``12s`` that fall inside the clip."""
    found: list[float] = []
    for text in texts:
        for match in _CITED.finditer(text):
            t = float(match.group(1))
            if 0 <= t <= duration_s and t not in found:
                found.append(t)
    return found[:MOST_CITED]


def event_keyframes(event: Event, duration_s: float, fps: float) -> list[KeyFrame]:
    """The frames worth showing for an event: before, during and after it, each region's frame
    with its box, and each time its evidence cites (merge them with ``merge_frames`` once the
    frames they resolve to are known)."""
    last = max(duration_s - 1.0 / fps, 0.0)
    gap = max(CONTEXT_S, 1.0 / fps)

    def clamp(t: float) -> float:
        return min(max(t, 0.0), last)

    def near_track(t: float, after: bool) -> float:
        """A tracked region's frame within ``gap`` of t on the same side of the event, so the
        context frame shows where the object was (or went)."""
        one = 1.0 / fps
        tracked = [
            r.t_s
            for r in event.regions
            if r.label.startswith("track")
            and (r.t_s >= event.end_s + one if after else r.t_s <= event.start_s - one)
            and abs(r.t_s - t) <= gap
        ]
        return min(tracked, key=lambda u: abs(u - t)) if tracked else t

    return [
        KeyFrame(clamp(near_track(event.start_s - gap, after=False)), "before"),
        KeyFrame(clamp((event.start_s + event.end_s) / 2), "during"),
        KeyFrame(clamp(near_track(event.end_s + gap, after=True)), "after"),
        *(
            KeyFrame(
                clamp(r.t_s),
                f"box: {r.label}" if r.label else "box",
                [Box(r.box, r.label)],
                optional=r.label.startswith("track"),
            )
            for r in event.regions
        ),
        *(KeyFrame(clamp(t), "cited") for t in cited_times(event.evidence, duration_s)),
    ]


def merge_frames(
    frames: Sequence[KeyFrame], shown_at: Callable[[float], float | None]
) -> list[tuple[float, KeyFrame]]:
    """One entry per distinct frame shown (``shown_at`` gives the time of the frame a wanted time
    resolves to, None when it is unavailable): roles joined, boxes pooled, in time order, at most
    ``MOST_PER_EVENT`` (boxed frames kept first). Each entry keeps the wanted time to look the
    frame up by."""
    merged: dict[float, tuple[float, KeyFrame]] = {}
    for frame in sorted(frames, key=lambda f: f.optional):
        shown = shown_at(frame.t_s)
        if shown is None or (frame.optional and shown not in merged):
            continue
        if frame.optional:
            merged[shown][1].boxes += frame.boxes
            continue
        if shown not in merged:
            merged[shown] = (frame.t_s, KeyFrame(shown, frame.role, list(frame.boxes)))
            continue
        kept = merged[shown][1]
        kept.boxes += frame.boxes
        if frame.role not in kept.role.split(" · "):
            kept.role = f"{kept.role} · {frame.role}"
    ordered = [merged[t] for t in sorted(merged)]
    if len(ordered) > MOST_PER_EVENT:
        ordered = sorted(ordered, key=lambda e: (not e[1].boxes, e[1].t_s))[:MOST_PER_EVENT]
        ordered.sort(key=lambda e: e[1].t_s)
    return ordered


@dataclass(frozen=True)
class Still:
    """A decoded frame as a small JPEG."""

    t_s: float
    """True time of the frame shown."""
    jpeg: bytes
    width: int
    height: int

    @property
    def data_url(self) -> str:
        """The frame as a page shows it inline."""
        return data_url(self.jpeg)


Size = tuple[int, int]


def grab_stills(
    path: str | Path, wanted: Sequence[tuple[float, Size]], fps: float
) -> dict[tuple[float, Size], Still]:
    """For each ``(time, (most width, most height))`` wanted, the frame that time resolves to,
    as a JPEG that fits that size; one sequential pass, decoding only the frames asked for. A
    time past the last frame gets the latest frame already shown (or nothing); an unreadable
    file gives nothing."""
    stills: dict[tuple[float, Size], Still] = {}
    try:
        reader = VideoReader(path)
    except GazeInputError:
        return stills
    with reader:
        todo = sorted(set(wanted))
        half = 0.5 / fps
        previous, last_frame = None, None
        for index, (pts, picture) in enumerate(reader.pictures()):
            if not todo:
                break
            t = frame_time(pts, index, fps, previous)
            previous = t
            due = [w for w in todo if t >= w[0] - half]
            if not due:
                continue
            frame = picture.bgr()
            last_frame = (t, frame)
            for w in due:
                stills[w] = _still(t, frame, w[1])
            todo = todo[len(due) :]
        if todo and last_frame is not None:
            for w in todo:
                stills[w] = _still(last_frame[0], last_frame[1], w[1])
    return stills


def _still(t: float, frame: np.ndarray, size: Size) -> Still:
    height, width = frame.shape[:2]
    scale = min(size[0] / width, size[1] / height, 1.0)
    small = resize_max_side(frame, max(1, round(max(width, height) * scale)))
    return Still(round(t, 6), encode_jpeg(small, JPEG_QUALITY), small.shape[1], small.shape[0])
