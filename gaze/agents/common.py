"""Helpers every agent uses: frames as labelled image parts, memories as prompt text."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gaze.models.protocol import ImagePart, Message, Part, TextPart, VideoPart

NOT_AVAILABLE = "(not available)"


def frame_parts(frames: Sequence[tuple[float, bytes]], header: str) -> Message:
    """A user message: a header, then each frame preceded by its time label."""
    parts: list[Part] = [TextPart(header)]
    for time_s, jpeg in frames:
        parts.append(TextPart(f"t={time_s:.2f}s"))
        parts.append(ImagePart(jpeg))
    return Message("user", tuple(parts))


@dataclass(frozen=True)
class VideoCut:
    """How frames are sent as videos: one per window of the clip."""

    window_of: Callable[[float], int]
    """The window a frame's time falls in (the rule that put each frame in its window)."""
    fps: float
    """The clip's sampling rate (frames per window / window length), which the server's own
    time stamps of a video follow."""


def video_parts(frames: Sequence[tuple[float, bytes]], header: str, cut: VideoCut) -> Message:
    """A user message: a header, then the frames of each window of the clip as one video
    preceded by its time label. Windows are cut on the clip's own grid, not from the list's
    start, so every call that shows a window sends the same video."""
    parts: list[Part] = [TextPart(header)]
    runs: list[list[tuple[float, bytes]]] = []
    for time_s, jpeg in frames:
        if runs and cut.window_of(runs[-1][0][0]) == cut.window_of(time_s):
            runs[-1].append((time_s, jpeg))
        else:
            runs.append([(time_s, jpeg)])
    for run in runs:
        first, last = run[0][0], run[-1][0]
        every = (last - first) / (len(run) - 1) if len(run) > 1 else 0.0
        parts.append(TextPart(f"t={first:.2f}-{last:.2f}s, {len(run)} frames every {every:.2f}s"))
        parts.append(VideoPart(tuple(ImagePart(jpeg) for _, jpeg in run), cut.fps))
    return Message("user", tuple(parts))


FRAMES_HEADER = "Frames, in time order:"


def frames_then_task(
    frames: Sequence[tuple[float, bytes]], task: str, video_windows: VideoCut | None = None
) -> list[Message]:
    """The request layout every call that sees frames shares, so a server's prefix cache (vLLM's
    automatic prefix caching, hosted prompt caching) reuses what an earlier call sent: a static
    system prompt identical for every role, then the frames (same bytes, labels and order for
    every call that sees them), and only then the role's per-call task text. With
    ``video_windows``, several frames go as one video per window (``video_parts``); a lone
    frame stays an image."""
    from gaze.prompts import load_prompt

    if video_windows is not None and len(frames) > 1:
        shown = video_parts(frames, FRAMES_HEADER, video_windows)
    else:
        shown = frame_parts(frames, FRAMES_HEADER)
    return [
        Message.text("system", load_prompt("frames_system").render()),
        Message("user", (*shown.parts, TextPart(task))),
    ]


def subsample(items: Sequence[Any], limit: int) -> list[Any]:
    """At most ``limit`` items spread evenly, first and last kept."""
    if len(items) <= limit:
        return list(items)
    if limit == 1:
        return [items[0]]
    step = (len(items) - 1) / (limit - 1)
    return [items[round(i * step)] for i in range(limit)]


def as_text(value: Mapping[str, object] | None) -> str:
    return NOT_AVAILABLE if not value else json.dumps(value, indent=1, ensure_ascii=False)


def span_text(start_s: float, end_s: float) -> str:
    return f"{start_s:.2f}-{end_s:.2f} s"
