"""Glitches and freezes (``gaze.pixels.frame_events``, judged on every decoded frame) as report
events, with what the other detectors need to know about them: their spans, and for each freeze
the instant its picture catches up."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gaze.pixels.frame_events import freezes, glitches
from gaze.pixels.pixel_event import PixelFinding, pixel_finding
from gaze.pixels.stutter import stutters
from gaze.video.steps import FrameSteps

Spans = list[tuple[float, float]]


def frame_spans(spans_s: Spans, times: np.ndarray) -> list[tuple[int, int]]:
    """Spans in seconds as inclusive index spans of the frames at ``times``."""
    return [
        (int(np.searchsorted(times, a - 1e-6)), int(np.searchsorted(times, b + 1e-6)) - 1)
        for a, b in spans_s
    ]


def glitch_spans(steps: FrameSteps | None, ignore_s: Spans) -> Spans:
    """Glitches on every decoded frame outside ``ignore_s``, as spans in seconds."""
    if steps is None:
        return []
    found = glitches(steps, frame_spans(ignore_s, steps.times_s))
    return [(float(steps.times_s[g.first]), float(steps.times_s[g.last])) for g in found]


@dataclass
class FrameLevel:
    """Glitch, freeze and stutter events of one clip."""

    glitches: list[PixelFinding] = field(default_factory=list)
    freezes: list[PixelFinding] = field(default_factory=list)
    stutters: list[PixelFinding] = field(default_factory=list)
    frames: list[tuple[int, int | None]] = field(default_factory=list)
    """Per freeze, decoded frame indices: its last moving frame, and the first frame after its
    repeats (the picture catching up; None when the clip ends frozen)."""

    @staticmethod
    def spans(events: list[PixelFinding]) -> Spans:
        return [(e.start_s, e.end_s) for e in events]


def frame_events(steps: FrameSteps, ignore_s: Spans) -> FrameLevel:
    """Glitches and freezes on every decoded frame, outside spans (in seconds) already
    explained."""
    times = steps.times_s
    ignore = frame_spans(ignore_s, times)
    out = FrameLevel()
    found_glitches = glitches(steps, ignore)
    for found in found_glitches:
        out.glitches.append(
            pixel_finding(
                "frame_corruption",
                float(times[found.first]),
                float(times[found.last]),
                f"{found.last - found.first + 1} frame(s) jump away from both neighbours and "
                "back: a transient glitch",
                found.evidence,
                0.5 + 0.45 * min(1.0, found.strength - 1.0),
            )
        )
    for found in freezes(steps, ignore + [(g.first, g.last) for g in found_glitches]):
        start, end = float(times[found.first]), float(times[found.last])
        out.freezes.append(
            pixel_finding(
                "frame_corruption",
                start,
                end,
                f"the picture freezes for {end - start:.1f} s in mid-motion, then resumes",
                found.evidence,
                0.5 + 0.4 * min(1.0, found.strength - 1.0),
                severity=2,
            )
        )
        out.frames.append((found.first, found.last + 1 if found.last + 1 < len(times) else None))
    taken = ignore + [(g.first, g.last) for g in found_glitches]
    taken += frame_spans(FrameLevel.spans(out.freezes), times)
    for found in stutters(steps, taken):
        start, end = float(times[found.first]), float(times[found.last])
        out.stutters.append(
            pixel_finding(
                "frame_corruption",
                start,
                end,
                f"the motion stutters for {end - start:.1f} s: every other frame repeats",
                found.evidence,
                0.5 + 0.4 * min(1.0, found.strength - 1.0),
                severity=2,
            )
        )
    return out
