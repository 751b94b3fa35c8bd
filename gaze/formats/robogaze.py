"""RoboGaze's ground-truth clip files (the project page's ``static/videos/clips/*.json``): one
JSON object per clip with ``file`` (the video beside it), ``instruction``, ``generator``, ``fps``,
``duration_s`` and ``events``.

How they differ from gaze's manifest, and what the import does:
- ``file`` instead of ``video``: the path is rewritten relative to the manifest written;
- dimension names ``object_scene`` and ``robot_body`` (and the two-letter codes): mapped to
  gaze's names;
- ``severity: null``: the type's default severity from the codebook (the schema needs one), and
  the event's position is listed in the clip's ``metadata.severity_defaulted``: severity metrics
  (Sev@1, severe-event recall) leave it out (``gaze.bench.score_cases.severity_known``);
- events ending a little past the clip (0.01 s in the published files): clamped to the clip's
  duration, counted; further past: skipped;
- event keys gaze has no field for (``event_id``, ``dimension_code``, ``evidence_limiting``) and
  clip keys such as ``title`` or ``page_note``: kept under ``metadata.robogaze``;
- files that are not clip files (the page's ``metadata.json``) and events of a type the codebook
  does not know: skipped with their reason.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gaze.errors import GazeInputError
from gaze.formats.summary import UNREADABLE, ImportSummary, read_json
from gaze.schema.codebook import load_codebook
from gaze.schema.events import Event, ScoringEvent
from gaze.schema.manifest import ManifestClip

DIMENSION_ALIASES = {
    "object_scene": "object_scene_consistency",
    "robot_body": "robot_body_consistency",
    "instruction": "instruction_consistency",
    "OSC": "object_scene_consistency",
    "RBC": "robot_body_consistency",
    "IC": "instruction_consistency",
    "TP": "task_progress",
    "PP": "physical_plausibility",
    "VQ": "visual_quality",
}
PAST_END_TOLERANCE_S = 0.05
"""An event ending this little past the clip is clamped to it (rounding in the source)."""
EVENT_EXTRAS = ("event_id", "dimension_code", "evidence_limiting")
CLIP_FIELDS = {"clip_id", "file", "instruction", "generator", "fps", "duration_s", "events"}


def clip_files(source: Path) -> list[Path]:
    return sorted(source.glob("*.json")) if source.is_dir() else [source]


def read_manifest(source: Path, manifest_dir: Path) -> tuple[list[ManifestClip], ImportSummary]:
    """The usable clips of ``source`` (paths relative to ``manifest_dir``) and the import
    summary; one line (exit 2) when the source is missing or holds no usable clip."""
    if not source.exists():
        raise GazeInputError(f"no such file or folder: {source}")
    summary = ImportSummary(source=f"robogaze:{source}")
    clips = read_clips(source, manifest_dir, summary)
    if not clips:
        raise GazeInputError(f"{source}: no usable robogaze clip ({summary.read} read)")
    return clips, summary


def read_clips(source: Path, manifest_dir: Path, summary: ImportSummary) -> list[ManifestClip]:
    """Every usable clip of ``source`` (a clip file or a folder of them)."""
    clips = []
    for path in clip_files(source):
        data = read_json(path, summary, path.name)
        if data is UNREADABLE:
            continue
        if not isinstance(data, dict) or "clip_id" not in data or "events" not in data:
            summary.skip(path.name, "not a clip file (no clip_id and events)")
            continue
        clip = _clip(data, path, manifest_dir, summary)
        if clip is not None:
            clips.append(clip)
            summary.written += 1
    return clips


def _clip(
    data: dict[str, Any], path: Path, manifest_dir: Path, summary: ImportSummary
) -> ManifestClip | None:
    where = path.name
    if not data.get("instruction") or not data.get("file"):
        summary.skip(where, "no instruction or no file")
        return None
    duration = data.get("duration_s")
    events: list[ScoringEvent] = []
    defaulted, extras = [], []
    for n, raw in enumerate(data.get("events") or []):
        event_where = f"{where} event {raw.get('event_id', n)}"
        made = _event(raw, duration, event_where, summary)
        if made is None:
            continue
        event, took_default = made
        events.append(event)
        extras.append({k: raw[k] for k in EVENT_EXTRAS if k in raw})
        if took_default:
            defaulted.append(len(events) - 1)  # its position in the clip's events
    video = os.path.relpath(path.parent / str(data["file"]), manifest_dir)
    metadata: dict[str, Any] = {
        "robogaze": {
            **{k: v for k, v in data.items() if k not in CLIP_FIELDS},
            "events": extras,
        }
    }
    if defaulted:
        metadata["severity_defaulted"] = defaulted
    try:
        return ManifestClip(
            clip_id=str(data["clip_id"]),
            video=video,
            instruction=str(data["instruction"]),
            generator=str(data.get("generator") or ""),
            fps=data.get("fps"),
            duration_s=duration,
            events=events,
            metadata=metadata,
        )
    except ValidationError as exc:
        summary.skip(where, f"not a valid clip ({exc.errors()[0]['msg']})")
        return None


def _event(
    raw: dict[str, Any], duration: float | None, where: str, summary: ImportSummary
) -> tuple[Event, bool] | None:
    book = load_codebook().codebook
    kind = str(raw.get("type", ""))
    try:
        dimension = book.dimension_of(kind)
    except KeyError:
        summary.skip(where, f"type {kind!r} not in the codebook")
        return None
    named = str(raw.get("dimension", ""))
    if DIMENSION_ALIASES.get(named, named) != dimension:
        summary.adjusted["dimension taken from the type"] += 1
    start, end = float(raw.get("start_s", 0.0)), float(raw.get("end_s", 0.0))
    if duration is not None and end > duration:
        if end - duration > PAST_END_TOLERANCE_S:
            summary.skip(where, "ends past the clip")
            return None
        end = float(duration)
        summary.adjusted["end clamped to the clip"] += 1
    given = raw.get("severity")
    took_default = given is None
    try:
        severity = float(book.type(kind).default_severity if given is None else given)
        event = Event(
            dimension=dimension,
            type=kind,
            start_s=start,
            end_s=end,
            severity=severity,
            description=str(raw.get("description") or ""),
        )
    except (ValidationError, TypeError, ValueError) as exc:
        summary.skip(where, f"not a valid event ({' '.join(str(exc).split())[:120]})")
        return None
    if took_default:
        summary.adjusted["null severity given the type's default"] += 1
    return event, took_default


SHORT_DIMENSIONS = {
    "object_scene_consistency": ("object_scene", "OSC"),
    "robot_body_consistency": ("robot_body", "RBC"),
    "instruction_consistency": ("instruction_consistency", "IC"),
    "task_progress": ("task_progress", "TP"),
    "physical_plausibility": ("physical_plausibility", "PP"),
    "visual_quality": ("visual_quality", "VQ"),
}
"""gaze's dimension -> (RoboGaze's name, its two-letter code)."""


def clip_document(clip: ManifestClip, manifest_dir: Path, out_dir: Path) -> dict[str, Any]:
    """A manifest row as a RoboGaze clip file (the way back): what the import kept under
    ``metadata.robogaze`` is restored, and a severity the import filled in is null again."""
    book = load_codebook().codebook
    kept = dict(clip.metadata.get("robogaze") or {})
    extras = list(kept.pop("events", []) or [])
    defaulted = set(clip.metadata.get("severity_defaulted") or [])
    events = []
    for n, event in enumerate(clip.events):
        if event.type is None or event.dimension is None:
            raise GazeInputError(
                f"{clip.clip_id}: an event without a type cannot be a RoboGaze event"
            )
        name, code = SHORT_DIMENSIONS[event.dimension]
        extra = extras[n] if n < len(extras) and isinstance(extras[n], dict) else {}
        events.append(
            {
                "event_id": extra.get("event_id", f"{clip.clip_id}_e{n + 1}"),
                "dimension": name,
                "dimension_code": extra.get("dimension_code", code),
                "type": event.type,
                "start_s": event.start_s,
                "end_s": event.end_s,
                "severity": None if n in defaulted else event.severity,
                "evidence_limiting": extra.get(
                    "evidence_limiting", book.type(event.type).evidence_limiting
                ),
                "description": event.description,
            }
        )
    video = os.path.relpath(manifest_dir / clip.video, out_dir)
    return {
        "clip_id": clip.clip_id,
        "file": video,
        "instruction": clip.instruction,
        "generator": clip.generator,
        "fps": clip.fps,
        "duration_s": clip.duration_s,
        **kept,
        "events": events,
    }
