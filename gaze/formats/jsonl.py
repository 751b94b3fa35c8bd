"""The input policy for JSON: a malformed file (not JSON, nested past what the parser takes, too
large) is one line naming the file and the line, never an internal error. Manifests,
predictions, curves and JSON Lines files go through ``parse_json``; readers that count or word a
bad file their own way catch ``JSON_ERRORS``. JSON Lines files of objects are read with every
bad line named (exit 2 on the first)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gaze.errors import GazeInputError

JSON_ERRORS = (json.JSONDecodeError, RecursionError)
"""What ``json.loads`` raises on a malformed document (RecursionError: nested too deeply)."""
MAX_DOCUMENT_BYTES = 1 << 30
"""A JSON document or line longer than this (1 GiB) is refused before it is parsed."""


def parse_json(text: str | bytes, where: str) -> Any:
    """``text`` parsed as JSON; GazeInputError naming ``where`` (a file and line) when it is not
    JSON, is nested deeper than the parser recurses, or is larger than MAX_DOCUMENT_BYTES."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise GazeInputError(f"{where}: larger than {MAX_DOCUMENT_BYTES >> 20} MiB; not read")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise GazeInputError(f"{where}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise GazeInputError(f"{where}: nested too deeply to read as JSON") from None


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
        row = parse_json(line, f"{path} line {number}")
        if not isinstance(row, dict):
            raise GazeInputError(f"{path} line {number}: expected a JSON object")
        out.append((number, row))
    return out
