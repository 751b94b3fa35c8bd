"""Two annotators' labels of the same clips against each other: how far humans agree on what
failed and when, so a lab can state its human ceiling beside a method's scores.

Contract:
  inputs    two benchmark manifests (DESIGN section 5) with the same clip ids (clips in one
            only are listed and left out); frame-level IoU at the first manifest's fps.
  matching  per clip, Hungarian assignment of A's events to B's maximising the summed frame IoU
            (``gaze.matching.assignment``, ties by the events' canonical order); the pairs kept
            are those with IoU > 0. Types play no part in the matching: a pair whose types
            differ is a type disagreement, not two misses.
  units     type agreement counts a unit per kept pair (A's type, B's type) and per event left
            unpaired (its type, "none": the other annotator saw no such event).
  metrics   ``type_alpha``: Krippendorff's alpha (nominal) over all units; ``type_alpha_paired``:
            over the pairs only (do they name the same type for the same moment);
            ``temporal_iou``: mean IoU of the pairs; ``event_f1``: 2 x pairs / (A's events + B's
            events); ``clean_kappa``: Cohen's kappa of the clean (no event) / not clean call per
            clip; each with a 95 % bootstrap interval over condition groups (the same resampling
            as ``bench score``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gaze.bench.inputs import load_manifest
from gaze.bench.score_cases import ClipCase, iou_matrix
from gaze.errors import GazeInputError
from gaze.matching.assignment import assign
from gaze.metrics import RESAMPLES
from gaze.metrics.bootstrap import group_sums, percentile_interval, resample_counts
from gaze.metrics.reliability import alpha_nominal, coincidences, kappa
from gaze.schema.events import ScoringEvent
from gaze.schema.manifest import ManifestClip

NONE = "none"
"""The value of a unit the other annotator has no event for."""
METRICS = ("type_alpha", "type_alpha_paired", "temporal_iou", "event_f1", "clean_kappa")


def _key(event: ScoringEvent) -> tuple[float, float, str]:
    return (event.start_s, event.end_s, event.kind)


def match_annotators(row_a: ManifestClip, events_b: Sequence[ScoringEvent]) -> dict[str, Any]:
    """One clip: the kept pairs (A index, B index, IoU) and the events left unpaired."""
    events_a = list(row_a.events)
    iou = iou_matrix(ClipCase(row_a, list(events_b), True), "robogaze").T  # (A, B)
    pairs = [
        (i, j, float(iou[i, j]))
        for i, j in assign(iou, None, [_key(e) for e in events_a], [_key(e) for e in events_b])
        if iou[i, j] > 0
    ]
    paired_a, paired_b = {i for i, _, _ in pairs}, {j for _, j, _ in pairs}
    return {
        "clip_id": row_a.clip_id,
        "pairs": [{"a": i, "b": j, "iou": v} for i, j, v in pairs],
        "only_a": [i for i in range(len(events_a)) if i not in paired_a],
        "only_b": [j for j in range(len(events_b)) if j not in paired_b],
        "n_a": len(events_a),
        "n_b": len(events_b),
    }


def _units(
    clip: dict[str, Any], a: Sequence[ScoringEvent], b: Sequence[ScoringEvent]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    paired = [(a[p["a"]].kind, b[p["b"]].kind) for p in clip["pairs"]]
    unpaired = [(a[i].kind, NONE) for i in clip["only_a"]]
    unpaired += [(NONE, b[j].kind) for j in clip["only_b"]]
    return paired + unpaired, paired


def _metrics(stats: np.ndarray, size: int) -> list[float | None]:
    """The metrics of one set of summed statistics (see ``_statistics`` for the layout)."""
    c2 = size * size
    units, paired = stats[:c2].reshape(size, size), stats[c2 : 2 * c2].reshape(size, size)
    iou_sum, n_pairs, n_events, *table = stats[2 * c2 :]
    return [
        alpha_nominal(units),
        alpha_nominal(paired),
        iou_sum / n_pairs if n_pairs else None,
        2 * n_pairs / n_events if n_events else None,
        kappa(np.array(table).reshape(2, 2)),
    ]


def annotator_agreement(
    first: str | Path, second: str | Path, *, n_boot: int = RESAMPLES, seed: int = 0
) -> dict[str, Any]:
    """The agreement of manifest ``second``'s events with manifest ``first``'s (the module's
    contract), with per-clip matches and bootstrap intervals."""
    rows_a = load_manifest(first, for_diagnosis=False)
    rows_b = {r.clip_id: r for r in load_manifest(second, for_diagnosis=False)}
    shared = [r for r in rows_a if r.clip_id in rows_b]
    if not shared:
        raise GazeInputError(f"{first} and {second} have no clip id in common")
    per_clip = [match_annotators(r, rows_b[r.clip_id].events) for r in shared]
    categories = sorted(
        {e.kind for r in shared for e in (*r.events, *rows_b[r.clip_id].events)} | {NONE}
    )
    size = len(categories)
    rows = []
    for row, clip in zip(shared, per_clip, strict=True):
        units, paired = _units(clip, row.events, rows_b[row.clip_id].events)
        table = np.zeros((2, 2))
        table[int(clip["n_a"] == 0), int(clip["n_b"] == 0)] = 1  # [A clean, B clean]
        rows.append(
            np.concatenate(
                [
                    coincidences(units, categories).ravel(),
                    coincidences(paired, categories).ravel(),
                    [
                        sum(p["iou"] for p in clip["pairs"]),
                        len(clip["pairs"]),
                        clip["n_a"] + clip["n_b"],
                    ],
                    table.ravel(),
                ]
            )
        )
    stats = np.array(rows)
    result: dict[str, Any] = dict(zip(METRICS, _metrics(stats.sum(axis=0), size), strict=True))
    groups = [r.condition_id for r in shared]
    ci: dict[str, list[float | None]] = {}
    if n_boot > 0:
        by_group, _ = group_sums(stats, groups)
        counts = resample_counts(len(by_group), n_boot, seed).astype(np.float64)
        samples = np.array(
            [
                [np.nan if v is None else v for v in _metrics(resampled, size)]
                for resampled in counts @ by_group
            ]
        )
        for name, (low, high) in zip(METRICS, percentile_interval(samples), strict=True):
            ci[name] = [None if np.isnan(v) else float(v) for v in (low, high)]
    result.update(
        {
            "n_clips": len(shared),
            "n_events_a": int(sum(c["n_a"] for c in per_clip)),
            "n_events_b": int(sum(c["n_b"] for c in per_clip)),
            "n_pairs": int(sum(len(c["pairs"]) for c in per_clip)),
            "ci": ci,
            "bootstrap": {"resamples": n_boot, "seed": seed, "groups": len(set(groups))},
            "per_clip": per_clip,
            "only_in_first": sorted({r.clip_id for r in rows_a} - set(rows_b)),
            "only_in_second": sorted(set(rows_b) - {r.clip_id for r in rows_a}),
        }
    )
    return result
