"""GLiDE's files (``groundtruth.json`` and ``batch_report.json`` of the VideoGlitchBench
evaluation): a JSON array of ``{video_name, bugs: [description], time_nodes: [[[s, e], ...]
per bug], no_bugs, ...}``.

They carry no failure types, dimensions or severities, and a bug may span several intervals.
They are scored with GLiDE's own scorer (``--compat glide-code``, ``gaze.metrics.glide_compat``),
or converted (``gaze convert --from glide``) into gaze rows whose events are untyped and
ungraded (``ScoringEvent`` with ``spans``): nothing is invented for what GLiDE leaves out, and
the metrics that need a type or a severity leave them out. Reading is lenient and honest: a row
that cannot be used is skipped with its reason; nothing is guessed.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import ValidationError

from gaze.errors import GazeInputError
from gaze.formats.jsonl import JSON_ERRORS
from gaze.formats.summary import ImportSummary
from gaze.schema.manifest import ManifestClip, Prediction

Interval = tuple[float, float]


@dataclass
class GlideVideo:
    """One video's bugs as GLiDE writes them."""

    name: str
    """``video_name`` with a trailing ``.mp4`` taken off, as GLiDE keys its videos."""
    bugs: list[str]
    time_nodes: list[list[Interval]] = field(default_factory=list)
    """Per bug, its intervals in seconds (may be fewer entries than bugs: GLiDE then uses [])."""
    video_name: str = ""
    """``video_name`` as written."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The row's other keys (``id``, ``game_name``, ``no_bugs``...), kept for the way back."""


def video_key(name: str) -> str:
    """GLiDE's key for a video: the name with ``.mp4`` removed (``str.replace``, as it does)."""
    return name.replace(".mp4", "")


def _intervals(value: Any) -> list[Interval] | None:
    if not isinstance(value, list):
        return None
    out: list[Interval] = []
    for pair in value:
        if not (isinstance(pair, list | tuple) and len(pair) == 2):
            return None
        try:
            start, end = float(pair[0]), float(pair[1])
        except (TypeError, ValueError):
            return None
        if not (math.isfinite(start) and math.isfinite(end)):
            return None
        out.append((start, end))
    return out


def read_glide(
    path: str | Path, summary: ImportSummary | None = None
) -> tuple[dict[str, GlideVideo], ImportSummary]:
    """The usable rows of a GLiDE file, keyed as GLiDE keys them, and the import summary (the
    one given, or a new one)."""
    path = Path(path)
    summary = ImportSummary(source=str(path)) if summary is None else summary
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise GazeInputError(f"no such file: {path}") from exc
    except (OSError, UnicodeDecodeError, *JSON_ERRORS) as exc:
        raise GazeInputError(f"{path} is not a GLiDE JSON file: {exc}") from exc
    if not isinstance(data, list):
        raise GazeInputError(f"{path}: a GLiDE file is a JSON array of per-video objects")
    videos: dict[str, GlideVideo] = {}
    for number, row in enumerate(data):
        summary.read += 1
        where = f"item {number}"
        if not isinstance(row, dict) or not isinstance(row.get("video_name"), str):
            summary.skip(where, "not an object with a video_name")
            continue
        where = f"item {number} ({row['video_name']})"
        bugs = row.get("bugs", [])
        if not isinstance(bugs, list) or not all(isinstance(b, str) for b in bugs):
            summary.skip(where, "bugs is not a list of descriptions")
            continue
        raw_nodes = row.get("time_nodes", [])
        nodes = [_intervals(n) for n in raw_nodes] if isinstance(raw_nodes, list) else [None]
        if any(n is None for n in nodes):
            summary.skip(where, "time_nodes is not a list of [start, end] lists per bug")
            continue
        key = video_key(row["video_name"])
        if key in videos:  # GLiDE's dict keeps the last one; say so rather than hide it
            summary.adjusted["duplicate video_name (the last row is kept, as GLiDE does)"] += 1
        extra = {k: v for k, v in row.items() if k not in ("video_name", "bugs", "time_nodes")}
        kept = [n for n in nodes if n is not None]
        videos[key] = GlideVideo(key, list(bugs), kept, row["video_name"], extra)
        summary.written += 1
    return videos, summary


@overload
def gaze_models(
    source: Path, out_dir: Path, as_manifest: Literal[True], summary: ImportSummary
) -> list[ManifestClip]: ...
@overload
def gaze_models(
    source: Path, out_dir: Path, as_manifest: Literal[False], summary: ImportSummary
) -> list[Prediction]: ...
@overload
def gaze_models(
    source: Path, out_dir: Path, as_manifest: bool, summary: ImportSummary
) -> list[ManifestClip] | list[Prediction]: ...
def gaze_models(
    source: Path, out_dir: Path, as_manifest: bool, summary: ImportSummary
) -> list[ManifestClip] | list[Prediction]:
    """A GLiDE file's rows as validated gaze manifest rows (``as_manifest``) or predictions
    (``gaze convert --from glide`` and ``bench score --format glide`` both read them so); a row
    gaze cannot hold is left out and counted."""
    videos, _ = read_glide(source, summary)
    model: type[ManifestClip] | type[Prediction] = ManifestClip if as_manifest else Prediction
    out: list[Any] = []
    for row in gaze_rows(videos, source, out_dir, as_manifest, summary):
        try:
            out.append(model.model_validate(row))
        except ValidationError as exc:
            summary.skip(row["clip_id"], f"not a valid row ({exc.errors()[0]['msg']})")
    summary.written = len(out)
    return out


def gaze_rows(
    videos: dict[str, GlideVideo],
    source: Path,
    out_dir: Path,
    as_manifest: bool,
    summary: ImportSummary,
) -> list[dict[str, Any]]:
    """GLiDE's rows as gaze manifest rows (``as_manifest``) or predictions: one untyped,
    ungraded event per bug, its description the bug's text, its intervals as ``spans`` (sorted;
    the span from the first start to the last end). A bug without time nodes has no span gaze
    can hold, and one with a reversed or negative interval is not a span: both are left out and
    counted (GLiDE's own scorer, ``--compat glide-code``, still reads them)."""
    rows = []
    for key, video in videos.items():
        events = []
        for n, bug in enumerate(video.bugs):
            where = f"{video.video_name} bug {n + 1}"
            intervals = sorted(video.time_nodes[n]) if n < len(video.time_nodes) else []
            if not intervals:
                summary.skip(where, "no time nodes: no span")
                continue
            if any(s < 0 or s > e for s, e in intervals):
                summary.skip(where, "an interval is negative or reversed")
                continue
            events.append(
                {
                    "start_s": intervals[0][0],
                    "end_s": max(e for _, e in intervals),
                    "description": bug,
                    **({"spans": [list(iv) for iv in intervals]} if len(intervals) > 1 else {}),
                }
            )
        row: dict[str, Any] = {"clip_id": key, "events": events}
        if as_manifest:
            video_path = os.path.relpath(source.parent / video.video_name, out_dir)
            row = {
                "clip_id": key,
                "video": video_path,
                **row,
                "metadata": {"glide": {"video_name": video.video_name, **video.extra}},
            }
        rows.append(row)
    return rows
