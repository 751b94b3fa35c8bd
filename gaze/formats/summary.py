"""What an import did: rows read and written, and every row or event left out, with its reason.
Import is lenient and honest: a row that cannot be used is skipped and counted, never guessed."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gaze.formats.jsonl import JSON_ERRORS

UNREADABLE = object()
"""What ``read_json`` gives for a file it could not read (counted as left out)."""


@dataclass
class ImportSummary:
    source: str
    read: int = 0
    written: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    """One entry per row or event left out: where, and why."""
    adjusted: Counter[str] = field(default_factory=Counter)
    """Values changed to fit gaze's schema, by kind (e.g. a null severity given the default)."""

    def skip(self, where: str, reason: str) -> None:
        self.skipped.append({"where": where, "reason": reason})

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "read": self.read,
            "written": self.written,
            "skipped": len(self.skipped),
            "skipped_by_reason": dict(Counter(s["reason"] for s in self.skipped)),
            "adjusted": dict(self.adjusted),
            "skipped_rows": self.skipped,
        }


def read_json(path: Path, summary: ImportSummary, where: str) -> Any:
    """One JSON file, counted as read; ``UNREADABLE`` (and counted as left out) when it cannot
    be read or parsed."""
    summary.read += 1
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, *JSON_ERRORS) as exc:
        summary.skip(where, f"unreadable ({type(exc).__name__})")
        return UNREADABLE
