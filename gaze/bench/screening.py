"""Screening: given several candidate clips per condition, keep the better half by a method's
reports and measure what was kept.

- badness of a clip = sum over its predicted events of severity x confidence (confidence 1 when
  the method gives none); lower is better; ties go by clip id, so rankings are deterministic;
- the kept half of a condition with n candidates is its ceil(n / 2) least bad clips;
- P@50: share of kept clips that are usable; Bad@50: share of kept clips with a severe
  (severity >= 4, rounded up) reference failure; Pick1: share of conditions whose least bad
  clip is usable.
Usability comes from a manifest field (default ``usable``); where a row lacks it, a clip is
usable when its reference has no severe failure.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from gaze.matching.robogaze import is_severe
from gaze.schema.events import ScoringEvent
from gaze.schema.manifest import ManifestClip


def badness(events: Sequence[ScoringEvent]) -> float:
    """Severity times confidence, summed; an ungraded event counts as severity 1."""
    return float(
        sum((e.severity or 1.0) * (1.0 if e.confidence is None else e.confidence) for e in events)
    )


def severe(event: ScoringEvent) -> bool:
    return event.severity is not None and is_severe(event.severity)


def usable(row: ManifestClip, field: str) -> bool:
    value = row.metadata.get(field)
    if isinstance(value, bool):
        return value
    return not any(severe(e) for e in row.events)


def screen(
    rows: Sequence[ManifestClip],
    predictions: dict[str, Sequence[ScoringEvent]],
    label_field: str = "usable",
) -> dict[str, Any]:
    groups: dict[str, list[ManifestClip]] = defaultdict(list)
    for row in rows:
        groups[row.condition_id].append(row)
    kept_usable = kept_bad = kept_total = picks = 0
    per_condition = []
    for condition, members in sorted(groups.items()):
        ranked = sorted(members, key=lambda r: (badness(predictions.get(r.clip_id, [])), r.clip_id))
        kept = ranked[: math.ceil(len(ranked) / 2)]
        kept_total += len(kept)
        kept_usable += sum(usable(r, label_field) for r in kept)
        kept_bad += sum(any(severe(e) for e in r.events) for r in kept)
        picks += usable(ranked[0], label_field)
        per_condition.append(
            {
                "condition_id": condition,
                "ranking": [
                    {
                        "clip_id": r.clip_id,
                        "badness": round(badness(predictions.get(r.clip_id, [])), 6),
                        "usable": usable(r, label_field),
                    }
                    for r in ranked
                ],
                "kept": [r.clip_id for r in kept],
            }
        )
    return {
        "n_conditions": len(groups),
        "n_clips": len(rows),
        "label_field": label_field,
        "p_at_50": kept_usable / kept_total if kept_total else None,
        "bad_at_50": kept_bad / kept_total if kept_total else None,
        "pick1": picks / len(groups) if groups else None,
        "conditions": per_condition,
    }
