"""The files ``bench score``, ``screen``, ``agreement`` and ``direction`` write: each says its
format, what wrote it and (for event scores) the matching protocol's version, so that a saved
file tells which code can read it and which other files it can be compared with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gaze import __version__
from gaze.atomic import atomic_write_text
from gaze.errors import GazeInputError
from gaze.matching import protocol_version

RESULTS_FORMAT = 1
"""Version of the results files' layout (bumped when a key changes meaning or goes away)."""


def stamped(result: dict[str, Any], kind: str) -> dict[str, Any]:
    """``result`` with its format, kind and scorer in front."""
    scorer: dict[str, Any] = {"gaze_version": __version__}
    protocol = result.get("protocol")
    if kind == "scores" and isinstance(protocol, str):
        scorer["protocol_version"] = protocol_version(protocol)
    return {"format": RESULTS_FORMAT, "kind": kind, "scorer": scorer, **result}


def write_results(out: str | Path, result: dict[str, Any], kind: str) -> dict[str, Any]:
    """Write ``result``, stamped, to ``out`` (atomically; ``-`` is standard output); returns
    what was written."""
    document = stamped(result, kind)
    atomic_write_text(out, json.dumps(document, indent=2) + "\n")
    return document


def check_readable(data: dict[str, Any], path: str | Path) -> None:
    """Refuse, in one line, a results file from a newer gaze (files from before formats were
    recorded read as format 1)."""
    found = data.get("format", 1)
    if not isinstance(found, int) or found > RESULTS_FORMAT:
        raise GazeInputError(
            f"{path} is a results file of format {found!r}; this gaze reads format "
            f"{RESULTS_FORMAT} and older: upgrade gaze"
        )
