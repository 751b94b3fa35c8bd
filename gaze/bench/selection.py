"""Which clips of a manifest a batch run takes: `bench run --only/--skip/--limit` (pure, no I/O).

Patterns are shell globs matched against clip ids (``fnmatch``, case-sensitive); ``--only``
keeps the clips any of its patterns match (all when none is given), ``--skip`` then drops the
clips any of its patterns match, and ``--limit`` keeps the first N left, in manifest order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from gaze.errors import GazeInputError
from gaze.schema.manifest import ManifestClip


@dataclass(frozen=True)
class Selection:
    """The clip filter of one run, recorded in its ``run.json``."""

    only: tuple[str, ...] = field(default_factory=tuple)
    """Glob patterns of clip ids to take (empty: every clip)."""
    skip: tuple[str, ...] = field(default_factory=tuple)
    """Glob patterns of clip ids to leave out, after ``only``."""
    limit: int | None = None
    """At most this many clips, the first in manifest order, after the patterns."""

    @property
    def filters(self) -> bool:
        return bool(self.only or self.skip or self.limit is not None)

    def record(self, chosen: int, of: int) -> dict[str, Any]:
        return {**asdict(self), "chosen": chosen, "of": of}


def select_rows(rows: Sequence[ManifestClip], selection: Selection) -> list[ManifestClip]:
    """The rows ``selection`` takes; a filter that leaves no clip is bad input (one line)."""
    chosen = [
        r
        for r in rows
        if (not selection.only or any(fnmatchcase(r.clip_id, p) for p in selection.only))
        and not any(fnmatchcase(r.clip_id, p) for p in selection.skip)
    ]
    if selection.limit is not None:
        chosen = chosen[: selection.limit]
    if rows and not chosen:
        raise GazeInputError(
            f"--only/--skip/--limit leave none of the manifest's {len(rows)} clips to run"
        )
    return chosen
