"""Aligning subtasks with windows: the segments the specialists examine (pure).

A subtask's segment spans the windows in which the observer saw it under way, completed or
failed. Windows no subtask claims form segments of their own, so no part of the clip goes
unexamined. Long segments are split so one specialist call never sees too many frames, on the
groups of windows the observers saw together (see ``split_span`` for when).
"""

from __future__ import annotations

from collections.abc import Sequence

from gaze.agents.observer import ACTIVE
from gaze.schema.records import Observation, Segment, TaskMemoryRecord, WindowRef
from gaze.settings.context import GazeContext
from gaze.settings.segment_length import segment_windows


def _runs(indices: Sequence[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for i in sorted(set(indices)):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def split_span(span: Sequence[int], size: int) -> list[list[int]]:
    """Consecutive window indices in chunks of at most ``size``. Chunks start at multiples of
    ``size``: those are the groups of windows the observers saw together
    (``gaze.graph.observing``), so a chunk's frames are a prefix a server's cache holds
    already, except the first chunk's when the span starts inside a group. That costs at most
    one chunk more than counting from the span's first window, and is taken when it costs
    none or when the span is longer than one group: then every chunk after the first is
    shared, more than a group's frames that a caching server would otherwise compute again
    for one more call."""
    if not span:
        return []
    plain = [list(span[i : i + size]) for i in range(0, len(span), size)]
    aligned: list[list[int]] = []
    for index in span:
        if aligned and index // size == aligned[-1][0] // size:
            aligned[-1].append(index)
        else:
            aligned.append([index])
    return aligned if len(aligned) <= len(plain) or len(span) > size else plain


def align_segments(
    windows: Sequence[WindowRef],
    observations: Sequence[Observation],
    subtask_ids: Sequence[str],
    max_windows: int,
) -> list[Segment]:
    """Segments from window metadata, per-window observations and the ordered subtask ids."""
    by_index = {w["index"]: w for w in windows}
    claimed: dict[str, list[int]] = {sid: [] for sid in subtask_ids}
    for obs in observations:
        for status in obs["subtask_status"]:
            if status["subtask_id"] in claimed and status["status"] in ACTIVE:
                claimed[status["subtask_id"]].append(obs["window"])
    pieces: list[tuple[str | None, list[int]]] = []
    for sid in subtask_ids:
        if claimed[sid]:
            span = list(range(min(claimed[sid]), max(claimed[sid]) + 1))
            pieces.append((sid, span))
    covered = {i for _, span in pieces for i in span}
    for run in _runs([i for i in by_index if i not in covered]):
        pieces.append((None, run))
    segments: list[Segment] = []
    for owner, span in sorted(pieces, key=lambda p: (p[1][0], p[0] or "~")):
        for chunk in split_span(span, max(1, max_windows)):
            segments.append(
                Segment(
                    id=f"seg{len(segments)}",
                    subtask_id=owner,
                    start_s=by_index[chunk[0]]["start_s"],
                    end_s=by_index[chunk[-1]]["end_s"],
                    windows=chunk,
                )
            )
    return segments


def clip_segments(
    windows: Sequence[WindowRef],
    observations: Sequence[Observation],
    task_memory: TaskMemoryRecord | None,
    ctx: GazeContext,
) -> list[Segment]:
    """The clip's segments: its windows aligned with the task memory's subtasks, each at most
    as long as the run's settings (``ctx``, fitted to the servers) allow."""
    subtask_ids = [s["id"] for s in task_memory["subtasks"]] if task_memory else []
    in_order = sorted(observations, key=lambda o: o["window"])
    return align_segments(windows, in_order, subtask_ids, segment_windows(ctx, len(windows)))
