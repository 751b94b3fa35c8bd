"""The files of RoboGaze's original code (``scripts/evaluate.py`` and the pipeline's reports, as
first published in commit 76d353d, kept in ``khang123452/RoboGaze_Ego``): ground-truth files
``<name>.json`` with a top-level ``glitches`` list (``glitch_type``, ``dimension``,
``start_frame``/``end_frame``, ``severity`` or ``human_severity``, ``note`` or ``description``),
and per-clip ``report.json`` files (``video_id``, ``task_instruction``, ``video_meta.fps``,
``glitches`` with ``start_frame``/``end_frame`` or ``start_time``/``end_time``).

Read as that scorer reads them, so its numbers can be reproduced: frames as integers (a time is
``round(t * fps)`` with ``video_meta.fps``, or a sibling ``video_meta.json``; otherwise frame 0);
severity ``int(severity or human_severity)`` (0 when missing); descriptions with whitespace
collapsed; the dimension as given, else the type's (``unknown`` for a type it does not know);
ground-truth files whose name starts with ``_`` skipped; a clip's predictions found by the same
aliases (file stem, ``video_id``, ``source_dataset__source_video_id``, the report's folder, and
dataset-prefixed forms for its three datasets).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gaze.formats.jsonl import JSON_ERRORS
from gaze.formats.summary import UNREADABLE, ImportSummary, read_json
from gaze.schema.codebook import load_codebook

DATASET_NAMES = ("gr1_real", "gr1_sim", "droid_mv")
"""The datasets whose folder names the original code puts in front of a report's id."""
TYPE_ALIASES = {
    "ignored_instruction_constraint": "ignored_constraint",
    "object_color_or_shape_drift": "object_appearance_drift",
    "left_right_robot_identity_confusion": "robot_identity_confusion",
    "impossible_motion": "other_implausible_dynamics",
}
"""The original taxonomy's names for four of gaze's codebook types (the other 26 are spelled
the same, in the same six dimensions)."""


@dataclass
class CodeEvent:
    """One event as the original scorer holds it."""

    id: str
    dimension: str
    glitch_type: str
    start_frame: int
    end_frame: int
    severity: int
    description: str


@dataclass
class CodeClip:
    """One clip's events, keyed and aliased as the original scorer keys them."""

    video_id: str
    task: str
    events: list[CodeEvent]
    path: Path
    aliases: list[str] = field(default_factory=list)
    fps: float | None = None
    """``video_meta.fps`` (reports) or a top-level ``fps`` (ground truth), when given."""
    raw: dict[str, Any] = field(default_factory=dict)
    """The file's object, for conversion (its ``glitches`` as written)."""


def clean_text(value: Any) -> str:
    return " ".join(str(value or "").split())


def as_int(value: Any, default: int | None = 0) -> int | None:
    try:
        return int(value) if value is not None else default
    except (TypeError, ValueError):
        return default


def _as_float(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def dimension_for(glitch_type: str, explicit: Any = None) -> str:
    """The dimension given, else the one the (aliased) type belongs to, else ``unknown``."""
    if explicit:
        return str(explicit)
    try:
        return load_codebook().codebook.dimension_of(TYPE_ALIASES.get(glitch_type, glitch_type))
    except KeyError:
        return "unknown"


def to_frame(time_s: float, fps: float) -> int:
    """A time as the original code turns it into a frame: ``round(t * fps)``, halves to even."""
    return int(round(time_s * fps))


def _event_frame(item: dict[str, Any], prefix: str, fps: float | None) -> int:
    frame = as_int(item.get(f"{prefix}_frame"), None)
    if frame is not None:
        return frame
    time_s = _as_float(item.get(f"{prefix}_time"))
    if time_s is not None and fps is not None:
        return to_frame(time_s, fps)
    return 0


def _unique(values: list[Any]) -> list[str]:
    out: list[str] = []
    for value in values:
        text = str(value)
        if text and text not in out:
            out.append(text)
    return out


def natural_key(value: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", value)]


def is_ground_truth(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("glitches"), list)


def read_ground_truth(folder: Path, summary: ImportSummary) -> list[CodeClip]:
    """Every ``*.json`` of ``folder`` with a top-level ``glitches`` list (names starting with
    ``_`` are not read); other files are skipped and counted."""
    clips = []
    files = sorted(folder.glob("*.json")) if folder.is_dir() else [folder]
    for path in files:
        if path.name.startswith("_"):
            continue
        data = read_json(path, summary, path.name)
        if data is UNREADABLE:
            continue
        if not is_ground_truth(data):
            summary.skip(path.name, "no top-level 'glitches' list")
            continue
        video_id = str(data.get("video_id") or path.stem)
        events = []
        for n, item in enumerate(data["glitches"], start=1):
            if not isinstance(item, dict):
                summary.skip(f"{path.name} glitch {n}", "not an object")
                continue
            glitch_type = str(item.get("glitch_type") or "unknown")
            events.append(
                CodeEvent(
                    id=str(item.get("glitch_id") or item.get("event_id") or f"G{n}"),
                    dimension=dimension_for(glitch_type, item.get("dimension")),
                    glitch_type=glitch_type,
                    start_frame=as_int(item.get("start_frame"), 0) or 0,
                    end_frame=as_int(item.get("end_frame"), 0) or 0,
                    severity=as_int(item.get("severity") or item.get("human_severity"), 0) or 0,
                    description=clean_text(item.get("note") or item.get("description")),
                )
            )
        aliases = [path.stem, video_id]
        if data.get("source_dataset") and data.get("source_video_id"):
            aliases += [f"{data['source_dataset']}__{data['source_video_id']}"]
            aliases += [str(data["source_video_id"])]
        if "__" in video_id:
            aliases.append(video_id.split("__", 1)[1])
        fps = _as_float(data.get("fps") or (data.get("video_meta") or {}).get("fps"))
        task = str(data.get("task") or data.get("task_instruction") or "")
        clips.append(CodeClip(video_id, task, events, path, _unique(aliases), fps, data))
        summary.written += 1
    return clips


def _dataset(parts: tuple[str, ...], root: Path) -> str:
    for part in parts[:-1]:
        if part in DATASET_NAMES:
            return part
    return root.name if root.name in DATASET_NAMES else ""


def _id_from_path(path: Path, root: Path) -> str:
    try:
        parent = path.parent.relative_to(root).parts
    except ValueError:
        return path.parent.name
    if len(parent) >= 2 and parent[-2] in DATASET_NAMES:
        return f"{parent[-2]}__{parent[-1]}"
    return parent[-1] if parent else path.parent.name


def read_reports(root: Path, summary: ImportSummary) -> dict[str, CodeClip]:
    """Every ``report.json`` under ``root``, keyed by the id the original scorer shows, each
    with the aliases it is found by."""
    reports: dict[str, CodeClip] = {}
    for path in sorted(root.rglob("report.json")) if root.is_dir() else [root]:
        data = read_json(path, summary, str(path.relative_to(root) if root.is_dir() else path))
        if data is UNREADABLE:
            continue
        if isinstance(data, list):
            data = {"glitches": data}
        if not isinstance(data, dict):
            data = {}
        video_id = str(data.get("video_id") or _id_from_path(path, root))
        meta = data.get("video_meta") or _sibling_meta(path) or {}
        fps = _as_float(meta.get("fps")) if isinstance(meta, dict) else None
        events = []
        for n, item in enumerate(data.get("glitches") or [], start=1):
            if not isinstance(item, dict):
                continue
            glitch_type = str(item.get("glitch_type") or "unknown")
            events.append(
                CodeEvent(
                    id=str(item.get("event_id") or f"P{n}"),
                    dimension=dimension_for(glitch_type, item.get("dimension")),
                    glitch_type=glitch_type,
                    start_frame=_event_frame(item, "start", fps),
                    end_frame=_event_frame(item, "end", fps),
                    severity=as_int(item.get("severity"), 0) or 0,
                    description=clean_text(item.get("description") or item.get("note")),
                )
            )
        parts = path.relative_to(root).parts if root.is_dir() else (path.name,)
        dataset = _dataset(parts, root)
        shown = video_id
        if dataset and not video_id.startswith(f"{dataset}__"):
            shown = f"{dataset}__{video_id}"
        aliases = [video_id, path.parent.name, _id_from_path(path, root)]
        if dataset:
            aliases += [f"{dataset}__{video_id}", f"{dataset}__{path.parent.name}"]
        task = str(data.get("task_instruction") or data.get("task") or "")
        reports[shown] = CodeClip(shown, task, events, path, _unique(aliases), fps, data)
        summary.written += 1
    return reports


def _sibling_meta(path: Path) -> dict[str, Any] | None:
    meta = path.parent / "video_meta.json"
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, *JSON_ERRORS):
        return None
    return data if isinstance(data, dict) else None


def pair_clips(
    truth: list[CodeClip], reports: dict[str, CodeClip]
) -> tuple[list[tuple[CodeClip, CodeClip]], list[str], list[str]]:
    """(ground truth, report) pairs in the scorer's order (natural sort of the ids), the
    ground-truth ids without a report, and the report ids no ground truth took."""
    by_alias: dict[str, str] = {}
    for shown, report in reports.items():
        for alias in report.aliases:
            by_alias.setdefault(alias, shown)
    pairs, unpaired, used = [], [], set()
    for clip in sorted(truth, key=lambda c: natural_key(c.video_id)):
        found = next((by_alias[a] for a in clip.aliases if a in by_alias), None)
        if found is None:
            unpaired.append(clip.video_id)
            continue
        used.add(found)
        pairs.append((clip, reports[found]))
    return pairs, unpaired, sorted(set(reports) - used)


def from_gaze(
    clip_id: str, task: str, events: list[Any], fps: float, defaulted: set[int], prefix: str
) -> CodeClip:
    """gaze events (a manifest row's or a prediction's) as the original scorer would read them
    from its own files: frames ``round(t * fps)``, severity ``int(severity)`` (0 for a severity
    an import filled in, which the original file left null), descriptions collapsed."""
    out = [
        CodeEvent(
            id=f"{prefix}{n}",
            dimension=e.dimension,
            glitch_type=e.type,
            start_frame=to_frame(e.start_s, fps),
            end_frame=to_frame(e.end_s, fps),
            severity=0 if n - 1 in defaulted else int(e.severity),
            description=clean_text(e.description),
        )
        for n, e in enumerate(events, start=1)
    ]
    return CodeClip(clip_id, task, out, Path(clip_id), [clip_id], fps)
