"""`gaze convert`: every peer format read into gaze's files, and gaze's files written back in
the peer's. One entry per format; the format modules say what each conversion keeps and what it
counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gaze.errors import GazeInputError
from gaze.formats.summary import ImportSummary

Rows = list[dict[str, Any]]
Outputs = dict[str, Rows]
"""Converted rows by what they are: ``manifest``, ``predictions`` or ``curves``."""

FROM_FORMATS = ("robogaze", "robojudge", "prm", "glide")
TO_FORMATS = ("robogaze", "robogaze-code", "robojudge", "prm", "glide")


def as_row(model: Any) -> dict[str, Any]:
    """A pydantic row as written to a JSONL file (defaults left out)."""
    row: dict[str, Any] = json.loads(model.model_dump_json(exclude_defaults=True))
    return row


def _from_robogaze(
    source: Path, out_dir: Path, fps: float | None, summary: ImportSummary
) -> Outputs:
    from gaze.formats import robogaze_code as code
    from gaze.formats import robogaze_original as original
    from gaze.formats.robogaze import read_clips

    if source.is_dir() and next(source.rglob("report.json"), None) is not None:
        reports = code.read_reports(source, summary)
        return {
            "predictions": [as_row(original.prediction(c, fps, summary)) for c in reports.values()]
        }
    probe = ImportSummary(source=summary.source)
    truth = code.read_ground_truth(source, probe)
    if truth:  # the original code's ground-truth files (a top-level 'glitches' list)
        summary.read, summary.skipped = probe.read, probe.skipped
        rows = [original.manifest_row(c, out_dir, fps, summary) for c in truth]
        kept = [as_row(r) for r in rows if r is not None]
        summary.written = len(kept)
        return {"manifest": kept}
    return {"manifest": [as_row(c) for c in read_clips(source, out_dir, summary)]}


def _from_robojudge(
    source: Path, out_dir: Path, fps: float | None, summary: ImportSummary
) -> Outputs:
    from gaze.formats import robojudge
    from gaze.formats.jsonl import json_rows

    if robojudge.is_gold(json_rows(source)):
        return {"manifest": robojudge.manifest_rows(source, summary)}
    return {"predictions": robojudge.prediction_rows(source, summary)}


def _from_prm(source: Path, out_dir: Path, fps: float | None, summary: ImportSummary) -> Outputs:
    from gaze.formats import prm
    from gaze.formats.jsonl import json_rows

    if source.is_dir() or source.suffix == ".csv":
        return {"curves": prm.step_metrics_curves(source, summary)}
    manifest, curves = prm.convert_rows(json_rows(source), source, summary)
    return {"manifest": manifest, "curves": curves}


def _from_glide(source: Path, out_dir: Path, fps: float | None, summary: ImportSummary) -> Outputs:
    """``groundtruth.json`` (a name with ``groundtruth`` or ``ground_truth``) becomes a
    manifest, any other GLiDE file (``batch_report.json``) predictions."""
    from gaze.formats.glide import gaze_models

    name = source.name.lower()
    as_manifest = "groundtruth" in name or "ground_truth" in name
    rows = [as_row(m) for m in gaze_models(source, out_dir, as_manifest, summary)]
    return {"manifest" if as_manifest else "predictions": rows}


READERS: dict[str, Callable[[Path, Path, float | None, ImportSummary], Outputs]] = {
    "robogaze": _from_robogaze,
    "robojudge": _from_robojudge,
    "prm": _from_prm,
    "glide": _from_glide,
}


def import_peer(
    fmt: str, source: Path, out_dir: Path, fps: float | None
) -> tuple[Outputs, ImportSummary]:
    """``source`` in ``fmt`` as gaze rows (paths relative to ``out_dir``), and the summary."""
    if not source.exists():
        raise GazeInputError(f"no such file or folder: {source}")
    summary = ImportSummary(source=f"{fmt}:{source}")
    outputs = READERS[fmt](source, out_dir, fps, summary)
    if not any(outputs.values()):
        raise GazeInputError(f"{source}: nothing usable as {fmt} ({summary.read} read)")
    return outputs, summary


def glide_document(rows: Rows) -> list[dict[str, Any]]:
    """gaze rows as a GLiDE file: the ``video_name`` an import kept, else ``<clip_id>.mp4`` (so
    a manifest and its predictions pair up); one bug per event (its description, else its
    type) with its intervals; ``no_bugs`` when there is none; the keys an import kept
    restored."""
    out = []
    for row in rows:
        events = row.get("events") or []
        kept = dict((row.get("metadata") or {}).get("glide") or {})
        name = kept.pop("video_name", f"{row['clip_id']}.mp4")
        out.append(
            {
                "video_name": name,
                **kept,
                "no_bugs": not events,
                "bugs": [e.get("description") or e.get("type") or "" for e in events],
                "time_nodes": [
                    [list(iv) for iv in e.get("spans") or [[e["start_s"], e["end_s"]]]]
                    for e in events
                ],
            }
        )
    return out
