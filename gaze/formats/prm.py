"""The PRM-as-a-Judge toolkit's rows (its manifests and its ``per_case.jsonl``), read as the
toolkit reads them: ``progress`` inline or ``progress_path`` (a JSON list, an object with a
``progress`` list, or a list of ``{"progress": x}`` objects, relative to the file);
``progress_processed`` used as it is; the task named by ``task_name``, ``task_id``,
``metadata.task_name``, then ``task`` or ``instruction``; the model by ``model`` or ``policy``
(default ``default``); the benchmark by ``benchmark`` (default ``manifest``); labels lowercased
strings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gaze.errors import GazeInputError
from gaze.formats.jsonl import JSON_ERRORS
from gaze.formats.summary import ImportSummary


def curve_values(row: dict[str, Any], where: str, base_dir: Path) -> tuple[Any, bool]:
    """(values, already processed) of a row's curve, before any checking of the numbers."""
    if isinstance(row.get("progress_processed"), list):
        return row["progress_processed"], True
    if "progress" in row and "progress_path" in row:
        raise GazeInputError(f"{where}: give 'progress' or 'progress_path', not both")
    if "progress_path" not in row:
        return row.get("progress"), False  # checked by the caller
    path = Path(str(row["progress_path"])).expanduser()
    path = path if path.is_absolute() else base_dir / path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, *JSON_ERRORS) as exc:
        raise GazeInputError(f"{where}: progress_path {path} is unreadable ({exc})") from None
    if isinstance(data, dict) and "progress" in data:
        data = data["progress"]
    if not isinstance(data, list):
        raise GazeInputError(f"{where}: progress_path must hold a list or {{'progress': [...]}}")
    return [item.get("progress", item) if isinstance(item, dict) else item for item in data], False


def case_fields(row: dict[str, Any]) -> dict[str, Any]:
    """benchmark, model, task and label of a row, with the toolkit's defaults."""
    found = row.get("metadata")
    metadata: dict[str, Any] = found if isinstance(found, dict) else {}
    task = (
        row.get("task_name")
        or row.get("task_id")
        or metadata.get("task_name")
        or row.get("task")
        or row.get("instruction")
        or "all"
    )
    label = row.get("label")
    return {
        "benchmark": str(row.get("benchmark") or "manifest"),
        "model": str(row.get("model") or row.get("policy") or "default"),
        "task": str(task).strip() or "all",
        "label": str(label).lower() if label is not None else None,
    }


SUCCESS_LABELS = {"success", "succeeded", "true", "1"}
"""Words the toolkit reads as a successful case."""
FAILURE_LABELS = {"failed", "failure", "false", "0"}
"""Words the toolkit reads as a failed case."""
TOOLKIT_FIELDS = {"case_id", "task", "video", "label", "progress", "progress_path"}


def _label(value: Any) -> bool | None:
    """A label as success (True) or failure (False) by the toolkit's words; None otherwise."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    return True if word in SUCCESS_LABELS else False if word in FAILURE_LABELS else None


def convert_rows(
    rows: list[tuple[int, dict[str, Any]]], path: Path, summary: ImportSummary
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Toolkit manifest or ``per_case.jsonl`` rows as (gaze manifest rows, gaze curve rows).
    The curve is the raw one (``progress`` or ``progress_path``); a row with only a processed
    curve gives no curve row (gaze would process it twice), counted. A label that is not one of
    the toolkit's words gives no ``success``, counted; a row without a video gives no manifest
    row (its curve is still converted)."""
    manifest, curves, seen = [], [], set()
    for number, row in rows:
        summary.read += 1
        where = f"{path.name} line {number}"
        case_id = str(row.get("case_id") or "").strip()
        if not case_id or case_id in seen:
            summary.skip(where, "repeated case_id" if case_id else "no case_id")
            continue
        seen.add(case_id)
        fields = case_fields(row)
        success = _label(row["label"]) if row.get("label") is not None else None
        if row.get("label") is not None and success is None:
            summary.adjusted[f"label {row['label']!r} is not a toolkit word: no success"] += 1
        instruction = row.get("task") or row.get("instruction") or fields["task"]
        kept = {k: v for k, v in row.items() if k not in TOOLKIT_FIELDS}
        if row.get("video"):
            manifest.append(
                {
                    "clip_id": case_id,
                    "video": str(row["video"]),
                    "instruction": str(instruction),
                    "generator": fields["model"],
                    **({"success": success} if success is not None else {}),
                    "metadata": {"prm": {**kept, "label": row.get("label")}},
                }
            )
        else:
            summary.adjusted["no video: curve only"] += 1
        raw_row = {k: v for k, v in row.items() if k != "progress_processed"}
        if "progress" not in raw_row and "progress_path" not in raw_row:
            summary.skip(where, "only a processed curve (progress_processed): no raw curve")
        else:
            values, _ = curve_values(raw_row, where, path.parent)
            curve: dict[str, Any] = {
                "case_id": case_id,
                "model": fields["model"],
                "task": fields["task"],
                "benchmark": fields["benchmark"],
                "progress": values,
            }
            if success is not None:
                curve["label"] = int(success)
            curves.append(curve)
        summary.written += 1
    return manifest, curves


def step_metrics_curves(folder: Path, summary: ImportSummary) -> list[dict[str, Any]]:
    """The docs site's ``step_metrics.csv`` files (per step: ``StepProgress`` and
    ``EpisodeSuccess``) as gaze curve rows, one per file, named by its folder."""
    import csv

    out = []
    files = sorted(folder.rglob("step_metrics.csv")) if folder.is_dir() else [folder]
    for path in files:
        summary.read += 1
        where = str(path.relative_to(folder)) if folder.is_dir() else path.name
        try:
            table = list(csv.DictReader(path.read_text(encoding="utf-8").splitlines()))
            values = [float(r["StepProgress"]) for r in table]
        except (OSError, UnicodeDecodeError, KeyError, ValueError, csv.Error) as exc:
            summary.skip(where, f"not a step_metrics table ({type(exc).__name__})")
            continue
        if not values:
            summary.skip(where, "no steps")
            continue
        parent = path.parent.relative_to(folder) if folder.is_dir() else Path(path.parent.name)
        row: dict[str, Any] = {"case_id": parent.as_posix(), "progress": values}
        success = _label(table[-1].get("EpisodeSuccess", ""))
        if success is not None:
            row["label"] = int(success)
        out.append(row)
        summary.written += 1
    return out


def toolkit_row(clip: dict[str, Any], curve: dict[str, Any] | None) -> dict[str, Any]:
    """A gaze manifest row (and its curve) as a toolkit manifest row (the way back)."""
    kept = dict((clip.get("metadata") or {}).get("prm") or {})
    label = kept.pop("label", None)
    if clip.get("success") is not None and _label(label) != clip["success"]:
        label = "success" if clip["success"] else "failure"
    out = {
        "case_id": clip["clip_id"],
        "task": clip["instruction"],
        "video": clip["video"],
        **kept,
        "label": label,
    }
    out.setdefault("task_name", clip["instruction"])
    out.setdefault("model", clip.get("generator") or "default")
    if curve is not None:
        out["progress"] = curve["progress"]
    return out
