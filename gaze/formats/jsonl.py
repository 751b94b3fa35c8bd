"""JSON Lines files of objects, read with every bad line named (exit 2 on the first)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gaze.errors import GazeInputError


def json_rows(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise GazeInputError(f"cannot read {path}: {exc}") from exc
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GazeInputError(f"{path} line {number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise GazeInputError(f"{path} line {number}: expected a JSON object")
        out.append((number, row))
    return out
