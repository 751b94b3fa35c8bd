"""GLiDE's files (``groundtruth.json`` and ``batch_report.json`` of the VideoGlitchBench
evaluation): a JSON array of ``{video_name, bugs: [description], time_nodes: [[[s, e], ...]
per bug], no_bugs, ...}``.

They carry no failure types, dimensions or severities, and a bug may span several intervals, so
they are scored with GLiDE's own scorer (``--compat glide-code``, ``gaze.metrics.glide_compat``)
rather than turned into gaze events with invented types. Reading is lenient and honest: a row
that cannot be used is skipped with its reason; nothing is guessed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gaze.errors import GazeInputError
from gaze.formats.summary import ImportSummary

Interval = tuple[float, float]


@dataclass
class GlideVideo:
    """One video's bugs as GLiDE writes them."""

    name: str
    """``video_name`` with a trailing ``.mp4`` taken off, as GLiDE keys its videos."""
    bugs: list[str]
    time_nodes: list[list[Interval]] = field(default_factory=list)
    """Per bug, its intervals in seconds (may be fewer entries than bugs: GLiDE then uses [])."""


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


def read_glide(path: str | Path) -> tuple[dict[str, GlideVideo], ImportSummary]:
    """The usable rows of a GLiDE file, keyed as GLiDE keys them, and the import summary."""
    path = Path(path)
    summary = ImportSummary(source=str(path))
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise GazeInputError(f"no such file: {path}") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
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
        videos[key] = GlideVideo(key, list(bugs), [n for n in nodes if n is not None])
        summary.written += 1
    return videos, summary
