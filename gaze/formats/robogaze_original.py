"""RoboGaze's original files as gaze's, and back (``gaze convert --from robogaze``,
``--to robogaze-code``): its ground-truth ``glitches`` files become manifest rows and its
``report.json`` files predictions; gaze's manifest rows and predictions become the
ground-truth and ``report.json`` files its ``scripts/evaluate.py`` reads.

How they differ from gaze's, and what the import does:
- frames: seconds are ``frame / fps``, with ``fps`` from the file (``fps`` or ``video_meta.fps``)
  or ``--fps``; a report's ``start_time``/``end_time`` are used as they are when given; a clip
  with frames and no fps is skipped with its reason;
- the four type names of the original taxonomy that gaze spells differently are mapped
  (``robogaze_code.TYPE_ALIASES``), counted; an unknown type is skipped with its reason;
- a ground truth's missing severity (``severity`` and ``human_severity`` null) takes the type's
  default and is listed in ``metadata.severity_defaulted`` (left out of severity metrics);
- ``note`` is the description when there is no ``description``;
- the video is ``video``, ``video_path`` or ``video_meta.video_path`` when the file names one,
  else ``<video_id>.mp4`` beside the file (counted: the file names none);
- event keys gaze has no field for (``glitch_id``, ``evidence``, ``source_hypotheses``...) are
  kept under the row's ``metadata.robogaze``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gaze.errors import GazeInputError
from gaze.formats.robogaze_code import TYPE_ALIASES, CodeClip, clean_text, to_frame
from gaze.formats.summary import ImportSummary
from gaze.schema.codebook import load_codebook
from gaze.schema.events import Event, ScoringEvent
from gaze.schema.manifest import ManifestClip, Prediction

EVENT_FIELDS = {
    "glitch_type",
    "dimension",
    "start_frame",
    "end_frame",
    "start_time",
    "end_time",
    "severity",
    "human_severity",
    "description",
    "note",
    "confidence",
}


def _seconds(item: dict[str, Any], edge: str, fps: float | None) -> float | None:
    if item.get(f"{edge}_time") is not None:
        return float(item[f"{edge}_time"])
    if item.get(f"{edge}_frame") is not None and fps:
        return int(item[f"{edge}_frame"]) / fps
    return None


def _event(
    item: dict[str, Any], fps: float | None, where: str, summary: ImportSummary
) -> tuple[Event, bool] | None:
    """A gaze event, and whether its severity was filled in."""
    book = load_codebook().codebook
    named = str(item.get("glitch_type") or "")
    kind = TYPE_ALIASES.get(named, named)
    try:
        dimension = book.dimension_of(kind)
    except KeyError:
        summary.skip(where, f"type {named!r} not in the codebook")
        return None
    if kind != named:
        summary.adjusted[f"type {named} read as {kind}"] += 1
    start, end = _seconds(item, "start", fps), _seconds(item, "end", fps)
    if start is None or end is None:
        summary.skip(where, "no time and no frame with an fps")
        return None
    given = item.get("severity") or item.get("human_severity")
    try:
        event = Event(
            dimension=dimension,
            type=kind,
            start_s=start,
            end_s=end,
            severity=float(given if given is not None else book.type(kind).default_severity),
            description=clean_text(item.get("description") or item.get("note")),
            evidence=[str(e) for e in item.get("evidence") or []],
            confidence=item.get("confidence"),
        )
    except (ValidationError, TypeError, ValueError) as exc:
        summary.skip(where, f"not a valid event ({' '.join(str(exc).split())[:120]})")
        return None
    if given is None:
        summary.adjusted["null severity given the type's default"] += 1
    return event, given is None


def _events(
    clip: CodeClip, fps: float | None, summary: ImportSummary
) -> tuple[list[ScoringEvent], list[int], list[dict[str, Any]]]:
    events: list[ScoringEvent] = []
    defaulted, extras = [], []
    for n, item in enumerate(clip.raw.get("glitches") or [], start=1):
        where = f"{clip.path.name} glitch {n}"
        if not isinstance(item, dict):
            summary.skip(where, "not an object")
            continue
        made = _event(item, fps, where, summary)
        if made is None:
            continue
        events.append(made[0])
        if made[1]:
            defaulted.append(len(events) - 1)
        extras.append({k: v for k, v in item.items() if k not in EVENT_FIELDS})
    return events, defaulted, extras


def manifest_row(
    clip: CodeClip, manifest_dir: Path, fps: float | None, summary: ImportSummary
) -> ManifestClip | None:
    """A ground-truth file as a manifest row (None, counted, when it cannot be one)."""
    fps = clip.fps or fps
    if fps is None:
        summary.skip(clip.path.name, "frames but no fps (give --fps)")
        return None
    meta = clip.raw.get("video_meta") if isinstance(clip.raw.get("video_meta"), dict) else {}
    named = clip.raw.get("video") or clip.raw.get("video_path") or (meta or {}).get("video_path")
    if not named:
        named = f"{clip.video_id}.mp4"
        summary.adjusted["video taken as <video_id>.mp4 beside the file (none named)"] += 1
    events, defaulted, extras = _events(clip, fps, summary)
    kept = {k: v for k, v in clip.raw.items() if k not in ("glitches", "video_id", "task")}
    metadata: dict[str, Any] = {"robogaze": {**kept, "events": extras}}
    if defaulted:
        metadata["severity_defaulted"] = defaulted
    if not clip.task:
        summary.skip(clip.path.name, "no task instruction")
        return None
    try:
        return ManifestClip(
            clip_id=clip.video_id,
            video=os.path.relpath(clip.path.parent / str(named), manifest_dir),
            instruction=clip.task,
            fps=fps,
            duration_s=(meta or {}).get("duration_s"),
            events=events,
            metadata=metadata,
        )
    except ValidationError as exc:
        summary.skip(clip.path.name, f"not a valid clip ({exc.errors()[0]['msg']})")
        return None


def prediction(clip: CodeClip, fps: float | None, summary: ImportSummary) -> Prediction:
    """A ``report.json`` as a gaze prediction (its events that can be read)."""
    events, _, _ = _events(clip, clip.fps or fps, summary)
    return Prediction(clip_id=clip.video_id, events=events)


def _glitches(events: list[ScoringEvent], fps: float | None, prefix: str) -> list[dict[str, Any]]:
    out = []
    for n, e in enumerate(events, start=1):
        item: dict[str, Any] = {
            "event_id": f"{prefix}{n}",
            "glitch_type": e.type,
            "dimension": e.dimension,
            "start_time": e.start_s,
            "end_time": e.end_s,
        }
        if fps:
            item["start_frame"] = to_frame(e.start_s, fps)
            item["end_frame"] = to_frame(e.end_s, fps)
        item["severity"] = None if e.severity is None else int(round(e.severity))
        item["description"] = e.description
        out.append(item)
    return out


def _typed(clip_id: str, events: list[ScoringEvent]) -> None:
    if any(e.type is None for e in events):
        raise GazeInputError(f"{clip_id}: an event without a type cannot be a RoboGaze glitch")


def ground_truth_document(clip: ManifestClip, fps: float | None) -> dict[str, Any]:
    """A manifest row as the original scorer's ground-truth file: the keys an import kept under
    ``metadata.robogaze`` restored, a severity it filled in null again."""
    _typed(clip.clip_id, clip.events)
    kept = dict(clip.metadata.get("robogaze") or {})
    extras = list(kept.pop("events", []) or [])
    defaulted = set(clip.metadata.get("severity_defaulted") or [])
    glitches = _glitches(clip.events, fps, "G")
    for n, item in enumerate(glitches):
        if n in defaulted:
            item["severity"] = None
        if n < len(extras) and isinstance(extras[n], dict):
            item.update(extras[n])
    given = {"fps": fps} if fps else {}  # so gaze can read the frames back
    return {
        "video_id": clip.clip_id,
        "task": clip.instruction,
        **given,
        **kept,
        "glitches": glitches,
    }


def report_document(pred: Prediction, fps: float | None) -> dict[str, Any]:
    """A gaze prediction as a ``report.json`` the original scorer reads (frames when the fps is
    known; times always). An untyped event (from GLiDE) cannot be one of its glitches."""
    _typed(pred.clip_id, pred.events)
    glitches = _glitches(pred.events, fps, "E")
    for item, e in zip(glitches, pred.events, strict=True):
        item["confidence"] = 1.0 if e.confidence is None else e.confidence
        item["evidence"] = list(e.evidence)
    meta = {"fps": fps} if fps else {}
    return {"video_id": pred.clip_id, "video_meta": meta, "glitches": glitches}
