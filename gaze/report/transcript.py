"""A clip's transcript on its viewer page: every request in the order it was sent, with the
prompt, the raw reply and what gaze read from it (``gaze.models.transcript``'s format)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from gaze.models.transcript import read_transcript
from gaze.report.templates import render


def transcript_section(exchanges: list[dict[str, Any]]) -> str:
    """The page section (empty for a clip that made no call)."""
    if not exchanges:
        return ""
    roles = Counter(x["role"] for x in exchanges)
    return render("transcript.html.j2", exchanges=exchanges, roles=list(roles.items()))


def transcript_of(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    """A clip's exchanges (none when it has no transcript; a damaged one is listed)."""
    if not path.is_file():
        return []
    try:
        return read_transcript(path)[1]
    except Exception as exc:  # a damaged transcript costs its own section only
        problems.append(str(exc))
        return []
