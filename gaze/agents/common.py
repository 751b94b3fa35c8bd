"""Helpers every agent uses: frames as labelled image parts, memories as prompt text."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from gaze.models.protocol import ImagePart, Message, Part, TextPart

NOT_AVAILABLE = "(not available)"


def frame_parts(frames: Sequence[tuple[float, bytes]], header: str) -> Message:
    """A user message: a header, then each frame preceded by its time label."""
    parts: list[Part] = [TextPart(header)]
    for time_s, jpeg in frames:
        parts.append(TextPart(f"t={time_s:.2f}s"))
        parts.append(ImagePart(jpeg))
    return Message("user", tuple(parts))


FRAMES_HEADER = "Frames, in time order:"


def frames_then_task(frames: Sequence[tuple[float, bytes]], task: str) -> list[Message]:
    """The request layout every call that sees frames shares, so a server's prefix cache (vLLM's
    automatic prefix caching, hosted prompt caching) reuses what an earlier call sent: a static
    system prompt identical for every role, then the frames (same bytes, labels and order for
    every call that sees them), and only then the role's per-call task text."""
    from gaze.prompts import load_prompt

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
