"""Cross-checks between judges (pure): where the diagnosis, the progress curve and the PA score
tell different stories, the report says so."""

from __future__ import annotations

from collections.abc import Sequence

from gaze.schema.events import Event
from gaze.schema.records import JudgeScoreRecord, ProgressRecord

DRAWDOWN = 0.05
"""A drop of the curve below its running maximum larger than this counts as a drawdown."""
PLATEAU = 0.02
"""A span whose curve moves less than this counts as a plateau."""
LOW_PA = 2
"""PA at or below this expects some physical or entity failure in the diagnosis."""
PHYSICAL = ("physical_plausibility", "object_scene_consistency", "robot_body_consistency")


def progress_notes(events: Sequence[Event], curve: ProgressRecord | None) -> list[str]:
    if not curve:
        return []
    times, values = curve["times_s"], curve["processed"]
    notes = []
    for ev in events:
        if ev.dimension != "task_progress":
            continue
        inside = [
            v for t, v in zip(times, values, strict=True) if ev.start_s - 0.5 <= t <= ev.end_s + 0.5
        ]
        if len(inside) < 2:
            notes.append(
                f"{ev.type} at {ev.start_s:.1f}-{ev.end_s:.1f} s: the progress curve "
                "has too few points in that span to confirm it"
            )
            continue
        peak, drop = inside[0], 0.0
        for v in inside:
            peak = max(peak, v)
            drop = max(drop, peak - v)
        spread = max(inside) - min(inside)
        if drop > DRAWDOWN:
            verdict = f"agrees: the curve falls by {drop:.2f}"
        elif spread < PLATEAU:
            verdict = "agrees: the curve is flat (a plateau)"
        else:
            verdict = f"disagrees: the curve rises by {inside[-1] - inside[0]:.2f}"
        notes.append(f"{ev.type} at {ev.start_s:.1f}-{ev.end_s:.1f} s: progress curve {verdict}")
    return notes


def pa_notes(events: Sequence[Event], pa: JudgeScoreRecord | None) -> list[str]:
    if not pa or pa["score"] > LOW_PA:
        return []
    physical = [e for e in events if e.dimension in PHYSICAL]
    if physical:
        return [f"PA {pa['score']}: consistent with {len(physical)} physical/entity event(s)"]
    return [
        f"PA {pa['score']} but no physical or entity event was reported: the judges "
        "disagree; inspect the clip"
    ]
