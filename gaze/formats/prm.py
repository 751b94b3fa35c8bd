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
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
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
