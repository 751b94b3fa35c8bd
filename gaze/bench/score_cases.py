"""`bench score`: predictions against a manifest under a matching protocol, with intervals and
slices. The judge is asked once for all needed pairs (IoU > 0), then matching is pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gaze.errors import GazeInputError
from gaze.matching import glide, robogaze
from gaze.matching.similarity import Pair, SimilarityJudge
from gaze.matching.spans import continuous_iou, frame_iou, interval_set_iou
from gaze.metrics import RESAMPLES
from gaze.metrics.bootstrap import bootstrap_ratios, percentile_interval, ratio
from gaze.schema.events import ScoringEvent
from gaze.schema.manifest import ManifestClip

HEADLINE = (
    "description_f1",
    "precision",
    "recall",
    "temporal_miou",
    "f1_x_iou",
    "clean_accuracy",
    "severe_event_recall",
    "sev_at_1",
)
DURATION_BANDS = (
    (0.0, 15.0, "<15s"),
    (15.0, 40.0, "15-40s"),
    (40.0, 80.0, "40-80s"),
    (80.0, float("inf"), ">80s"),
)


@dataclass
class ClipCase:
    """One clip to score: its reference and predicted events."""

    row: ManifestClip
    preds: list[ScoringEvent]
    has_prediction: bool


def severity_known(case: ClipCase) -> set[int]:
    """Indices of the reference events whose severity the annotators gave: an import that filled
    a missing severity with the type's default lists it in ``metadata.severity_defaulted``, a
    peer without severities leaves it null, and severity metrics (Sev@1, severe-event recall)
    leave both out."""
    defaulted = case.row.metadata.get("severity_defaulted", [])
    graded = {j for j, r in enumerate(case.row.events) if r.severity is not None}
    return graded - {i for i in defaulted if isinstance(i, int)}


def severity_counts(
    case: ClipCase,
    pairs: Sequence[tuple[int, int]],
    dimension: str | None = None,
    known: set[int] | None = None,
) -> tuple[list[int], int, int]:
    """(severe references, matched pairs graded for severity, of which within 1 of the
    reference), over the references whose severity is known (``known``, computed when not
    given) and of ``dimension``, when given: then ``pairs`` are that dimension's."""
    refs, preds = case.row.events, case.preds
    known = severity_known(case) if known is None else known
    severe = [
        j
        for j, r in enumerate(refs)
        if j in known
        and robogaze.is_severe(r.severity or 0.0)
        and (dimension is None or r.dimension == dimension)
    ]
    graded = [(i, j) for i, j in pairs if j in known and preds[i].severity is not None]
    within = sum(
        abs((preds[i].severity or 0.0) - (refs[j].severity or 0.0)) <= 1 for i, j in graded
    )
    return severe, len(graded), within


def _spans(events: Sequence[ScoringEvent]) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([e.start_s for e in events], dtype=np.float64),
        np.array([e.end_s for e in events], dtype=np.float64),
    )


def _fps(row: ManifestClip) -> float:
    if row.fps is None:
        raise GazeInputError(
            f"clip {row.clip_id}: the manifest gives no fps, which frame-level IoU needs"
        )
    return row.fps


def iou_matrix(case: ClipCase, protocol: str) -> np.ndarray:
    preds, refs = case.preds, case.row.events
    if not preds or not refs:
        return np.zeros((len(preds), len(refs)))
    if any(e.spans for e in [*preds, *refs]):  # a peer's multi-interval events
        fps = None if protocol == "glide" else _fps(case.row)
        return np.array(
            [[interval_set_iou(p.intervals(), r.intervals(), fps) for r in refs] for p in preds]
        )
    if protocol == "glide":
        return continuous_iou(_spans(preds), _spans(refs))
    return frame_iou(_spans(preds), _spans(refs), _fps(case.row))


def _judged(event: ScoringEvent, reads: str) -> str:
    """The text of an event a judge compares (its description, or its type for ``type``)."""
    if reads != "type":
        return event.description
    if event.type is None:
        raise GazeInputError(
            "the type judge compares failure types, and some events have none (a peer's, such "
            "as GLiDE's): use a description judge (lexical, embed, llm or table:FILE)"
        )
    return event.type


def needed_pairs(
    cases: Sequence[ClipCase], ious: Sequence[np.ndarray], protocol: str, reads: str
) -> list[Pair]:
    """Unique pairs to judge: robogaze asks only where IoU > 0; glide rates every pair (its
    Hungarian step runs on the ratings)."""
    pairs: set[Pair] = set()
    for case, iou in zip(cases, ious, strict=True):
        for i, j in zip(
            *np.nonzero(iou > 0 if protocol == "robogaze" else np.ones_like(iou)), strict=True
        ):
            pairs.add((_judged(case.preds[i], reads), _judged(case.row.events[j], reads)))
    return sorted(pairs)


def _similarity(
    case: ClipCase, iou: np.ndarray, table: dict[Pair, float], protocol: str, reads: str
) -> np.ndarray:
    sim = np.zeros_like(iou)
    for i, j in zip(
        *np.nonzero(iou > 0 if protocol == "robogaze" else np.ones_like(iou)), strict=True
    ):
        sim[i, j] = table[(_judged(case.preds[i], reads), _judged(case.row.events[j], reads))]
    return sim


def event_key(
    event: ScoringEvent,
) -> tuple[float, float, str, str, float, str, tuple[tuple[float, float], ...]]:
    """A canonical sort key of an event (what it is, not where it stands in a list)."""
    return (
        event.start_s,
        event.end_s,
        event.dimension or "",
        event.type or "",
        -1.0 if event.severity is None else event.severity,
        event.description,
        tuple(event.spans),
    )


# Per-clip numerators and denominators of every headline metric (see gaze.metrics.bootstrap).
RatioRow = dict[str, tuple[float, float]]


def dimension_rows(
    case: ClipCase,
    pairs: Sequence[tuple[int, int]],
    gains: Sequence[float],
    ious: Sequence[float],
    protocol: str,
) -> dict[str, RatioRow]:
    """Per primary dimension, the clip's ratio row sliced from its one matching: a pair counts
    toward the precision of its prediction's dimension and the recall, mIoU, Sev@1 and severe
    recall of its reference's dimension (``gains`` are S for robogaze, 0-5 ratings for glide)."""
    refs, preds = case.row.events, case.preds
    out: dict[str, RatioRow] = {}
    known = severity_known(case)  # once per clip, not once per dimension
    mine = list(zip(pairs, gains, ious, strict=True))
    for dim in sorted({e.dimension for e in [*refs, *preds] if e.dimension is not None}):
        n = float(sum(p.dimension == dim for p in preds))
        m = float(sum(r.dimension == dim for r in refs))
        by_pred = [(g, u) for (i, _), g, u in mine if preds[i].dimension == dim]
        by_ref = [(g, u, i, j) for (i, j), g, u in mine if refs[j].dimension == dim]
        severe, graded, within = severity_counts(case, [(i, j) for *_, i, j in by_ref], dim, known)
        found = {j for *_, j in by_ref}
        common: RatioRow = {
            "clean_accuracy": (0.0, 0.0),
            "severe_event_recall": (float(len(found.intersection(severe))), float(len(severe))),
            "sev_at_1": (float(within), float(graded)),
        }
        gain_p, gain_r = sum(g for g, _ in by_pred), sum(g for g, *_ in by_ref)
        both_p = sum(g * u for g, u in by_pred)
        both_r = sum(g * u for g, u, *_ in by_ref)
        if protocol == "glide":
            out[dim] = {
                "precision": (gain_p, 5 * n),
                "recall": (gain_r, 5 * m),
                "temporal_miou": (float(sum(u for _, u, *_ in by_ref)), float(len(by_ref))),
                "f1_x_iou_p": (both_p, 5 * n),
                "f1_x_iou_r": (both_r, 5 * m),
                **common,
            }
            continue
        eligible = 1.0 if m else 0.0
        p, r = (gain_p / n if n else 0.0), (gain_r / m if m else 0.0)
        pu, ru = (both_p / n if n else 0.0), (both_r / m if m else 0.0)
        miou = float(np.mean([u for _, u, *_ in by_ref])) if by_ref else 0.0
        out[dim] = {
            "description_f1": (robogaze.f1(p, r) * eligible, eligible),
            "precision": (p * eligible, eligible),
            "recall": (r * eligible, eligible),
            "temporal_miou": (miou * eligible, eligible),
            "f1_x_iou": (robogaze.f1(pu, ru) * eligible, eligible),
            **common,
        }
    return out


ClipScore = tuple[RatioRow, dict[str, Any], dict[str, RatioRow]]
"""A clip's ratio row, its detail for the output, and its rows per primary dimension."""


def robogaze_clip(case: ClipCase, iou: np.ndarray, sim: np.ndarray) -> ClipScore:
    refs, preds = case.row.events, case.preds
    result = robogaze.match(
        iou,
        sim,
        [p.dimension for p in preds],
        [r.dimension for r in refs],
        [event_key(p) for p in preds],
        [event_key(r) for r in refs],
    )
    scores = robogaze.clip_scores(result, len(preds), len(refs))
    eligible = 1.0 if refs else 0.0
    matched_refs = {j for _, j in result.pairs}
    severe, graded, within = severity_counts(case, result.pairs)
    row: RatioRow = {
        "description_f1": (scores.f1 * eligible, eligible),
        "precision": (scores.precision * eligible, eligible),
        "recall": (scores.recall * eligible, eligible),
        "temporal_miou": (scores.miou * eligible, eligible),
        "f1_x_iou": (scores.f1_x_iou * eligible, eligible),
        "clean_accuracy": (float(not refs and not preds), float(not refs)),
        "severe_event_recall": (float(sum(j in matched_refs for j in severe)), float(len(severe))),
        "sev_at_1": (float(within), float(graded)),
    }
    detail = {
        "n": scores.n,
        "m": scores.m,
        "precision": scores.precision,
        "recall": scores.recall,
        "f1": scores.f1,
        "f1_x_iou": scores.f1_x_iou,
        "miou": scores.miou,
        "matched": [
            {"pred": i, "ref": j, "s": round(s, 6), "iou": round(u, 6)}
            for (i, j), s, u in zip(result.pairs, result.similarity, result.iou, strict=True)
        ],
        "unmatched_pred": result.unmatched_pred,
        "unmatched_ref": result.unmatched_ref,
    }
    by_dim = dimension_rows(case, result.pairs, result.similarity, result.iou, "robogaze")
    return row, detail, by_dim


def glide_clip(case: ClipCase, iou: np.ndarray, sim: np.ndarray) -> ClipScore:
    refs, preds = case.row.events, case.preds
    rating = 5.0 * sim  # a [0, 1] judge's s counts as 5s
    result = glide.match(rating, iou, [event_key(p) for p in preds], [event_key(r) for r in refs])
    s = float(sum(result.rating))
    su = float(sum(r * u for r, u in zip(result.rating, result.iou, strict=True)))
    matched_refs = {j for _, j in result.pairs}
    severe, graded, within = severity_counts(case, result.pairs)
    n, m, k = float(len(preds)), float(len(refs)), float(len(result.pairs))
    row: RatioRow = {
        "precision": (s, 5 * n),
        "recall": (s, 5 * m),
        "temporal_miou": (float(sum(result.iou)), k),
        "f1_x_iou_p": (su, 5 * n),
        "f1_x_iou_r": (su, 5 * m),
        "clean_accuracy": (float(not refs and not preds), float(not refs)),
        "severe_event_recall": (float(sum(j in matched_refs for j in severe)), float(len(severe))),
        "sev_at_1": (float(within), float(graded)),
    }
    detail = {
        "n": len(preds),
        "m": len(refs),
        "matched": [
            {"pred": i, "ref": j, "rating": round(r, 6), "iou": round(u, 6)}
            for (i, j), r, u in zip(result.pairs, result.rating, result.iou, strict=True)
        ],
    }
    return row, detail, dimension_rows(case, result.pairs, result.rating, result.iou, "glide")


def _harmonic(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1.0), 0.0)


@dataclass
class Aggregator:
    """Turns per-clip ratio rows into headline metrics (and resampled ones)."""

    protocol: str

    def keys(self) -> list[str]:
        if self.protocol == "glide":
            return [
                "precision",
                "recall",
                "temporal_miou",
                "f1_x_iou_p",
                "f1_x_iou_r",
                "clean_accuracy",
                "severe_event_recall",
                "sev_at_1",
            ]
        return list(HEADLINE)

    def arrays(self, rows: Sequence[RatioRow]) -> tuple[np.ndarray, np.ndarray]:
        keys = self.keys()
        num = np.array([[r[k][0] for k in keys] for r in rows], dtype=np.float64).reshape(
            -1, len(keys)
        )
        den = np.array([[r[k][1] for k in keys] for r in rows], dtype=np.float64).reshape(
            -1, len(keys)
        )
        return num, den

    def finish(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """(..., K) ratios -> headline metrics (F1s derived for glide)."""
        named = {k: values[..., i] for i, k in enumerate(self.keys())}
        if self.protocol == "glide":
            named["description_f1"] = _harmonic(named["precision"], named["recall"])
            named["f1_x_iou"] = _harmonic(named.pop("f1_x_iou_p"), named.pop("f1_x_iou_r"))
        return {k: named[k] for k in HEADLINE}

    def point(self, rows: Sequence[RatioRow]) -> dict[str, float | None]:
        num, den = self.arrays(rows)
        values = self.finish(ratio(num.sum(axis=0), den.sum(axis=0)))
        return {k: (None if np.isnan(v) else round(float(v), 6)) for k, v in values.items()}


def clip_rows(
    cases: Sequence[ClipCase], protocol: str, judge: SimilarityJudge
) -> tuple[list[RatioRow], list[dict[str, Any]], dict[Pair, float], list[dict[str, RatioRow]]]:
    """Per-clip ratio rows and details; the judge is asked once, for the needed pairs only."""
    if protocol not in ("robogaze", "glide"):
        raise GazeInputError(f"unknown protocol {protocol!r}; use robogaze or glide")
    ious = [iou_matrix(c, protocol) for c in cases]
    pairs = needed_pairs(cases, ious, protocol, judge.reads)
    table = dict(zip(pairs, (float(s) for s in judge.score(pairs)), strict=True))
    per_clip_fn: Callable[..., ClipScore] = glide_clip if protocol == "glide" else robogaze_clip
    rows, details, by_dims = [], [], []
    for case, iou in zip(cases, ious, strict=True):
        row, detail, by_dim = per_clip_fn(
            case, iou, _similarity(case, iou, table, protocol, judge.reads)
        )
        rows.append(row)
        by_dims.append(by_dim)
        details.append(
            {"clip_id": case.row.clip_id, "has_prediction": case.has_prediction, **detail}
        )
    return rows, details, table, by_dims


def score_cases(
    cases: Sequence[ClipCase],
    protocol: str,
    judge: SimilarityJudge,
    *,
    n_boot: int = RESAMPLES,
    seed: int = 0,
    slice_fields: Sequence[str] = (),
) -> dict[str, Any]:
    rows, details, table, by_dims = clip_rows(cases, protocol, judge)
    agg = Aggregator(protocol)
    out: dict[str, Any] = {
        "protocol": protocol,
        "judge": judge.name,
        "n_clips": len(cases),
        "n_event_clips": sum(1 for c in cases if c.row.events),
        "n_clean_clips": sum(1 for c in cases if not c.row.events),
        "n_judged_pairs": len(table),
        **agg.point(rows),
    }
    out["ci"] = intervals(agg, rows, [c.row.condition_id for c in cases], n_boot, seed)
    out["bootstrap"] = {"resamples": n_boot, "seed": seed, "unit": "condition_id"}
    out["per_clip"] = details
    out["slices"] = slices(cases, rows, agg, by_dims, slice_fields, n_boot, seed)
    return out


def intervals(
    agg: Aggregator, rows: Sequence[RatioRow], groups: Sequence[str], n_boot: int, seed: int
) -> dict[str, list[float | None]]:
    if n_boot <= 0 or not rows:
        return {}
    num, den = agg.arrays(rows)
    samples = agg.finish(bootstrap_ratios(num, den, groups, n_boot, seed))
    stacked = np.stack([samples[k] for k in HEADLINE], axis=1)
    bounds = percentile_interval(stacked)
    return {
        k: [None if np.isnan(v) else round(float(v), 6) for v in bounds[i]]
        for i, k in enumerate(HEADLINE)
    }


def paired_difference(
    cases_a: Sequence[ClipCase],
    cases_b: Sequence[ClipCase],
    protocol: str,
    judge: SimilarityJudge,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """Method A minus method B on the same clips: point difference and a paired interval (the
    same condition-group resamples for both methods)."""
    agg = Aggregator(protocol)
    rows_a = clip_rows(cases_a, protocol, judge)[0]
    rows_b = clip_rows(cases_b, protocol, judge)[0]
    point_a, point_b = agg.point(rows_a), agg.point(rows_b)
    difference: dict[str, float | None] = {}
    for k in HEADLINE:
        a_value, b_value = point_a[k], point_b[k]
        difference[k] = None if a_value is None or b_value is None else round(a_value - b_value, 6)
    groups = [c.row.condition_id for c in cases_a]
    ci: dict[str, list[float | None]] = {}
    if n_boot > 0:
        num_a, den_a = agg.arrays(rows_a)
        num_b, den_b = agg.arrays(rows_b)
        a = agg.finish(bootstrap_ratios(num_a, den_a, groups, n_boot, seed))
        b = agg.finish(bootstrap_ratios(num_b, den_b, groups, n_boot, seed))
        bounds = percentile_interval(np.stack([a[k] - b[k] for k in HEADLINE], axis=1))
        ci = {
            k: [None if np.isnan(v) else round(float(v), 6) for v in bounds[i]]
            for i, k in enumerate(HEADLINE)
        }
    return {"difference": difference, "ci": ci}


def duration_band(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    return next(name for lo, hi, name in DURATION_BANDS if lo <= seconds < hi)


def _field(row: ManifestClip, name: str) -> str:
    value = getattr(row, name, None) if name in type(row).model_fields else row.metadata.get(name)
    return "unknown" if value in (None, "") else str(value)


def slices(
    cases: Sequence[ClipCase],
    rows: Sequence[RatioRow],
    agg: Aggregator,
    by_dims: Sequence[dict[str, RatioRow]],
    fields: Sequence[str],
    n_boot: int = 0,
    seed: int = 0,
) -> dict[str, Any]:
    """Headline metrics by generator, duration band, primary dimension and any named field;
    the generator, duration and field slices carry their own 95 % intervals (``ci``, the same
    condition-group bootstrap as the whole set, within the slice).

    The dimension slice comes from each clip's one matching (``dimension_rows``): a clip counts
    in a dimension's slice when it has a predicted or reference event of that dimension."""
    out: dict[str, Any] = {}
    groupings = {
        "generator": [_field(c.row, "generator") for c in cases],
        "duration": [duration_band(c.row.duration_s) for c in cases],
    }
    for name in fields:
        groupings[name] = [_field(c.row, name) for c in cases]
    conditions = [c.row.condition_id for c in cases]
    for grouping, labels in groupings.items():
        out[grouping] = {}
        for label in sorted(set(labels)):
            inside = [i for i, lab in enumerate(labels) if lab == label]
            sub_rows = [rows[i] for i in inside]
            out[grouping][label] = {
                "n_clips": len(inside),
                **agg.point(sub_rows),
                "ci": intervals(agg, sub_rows, [conditions[i] for i in inside], n_boot, seed),
            }
    dims = sorted({d for by_dim in by_dims for d in by_dim})
    out["dimension"] = {}
    for dim in dims:
        sub_rows = [by_dim[dim] for by_dim in by_dims if dim in by_dim]
        point = agg.point(sub_rows)
        point.pop("clean_accuracy", None)
        out["dimension"][dim] = {"n_clips": len(sub_rows), **point}
    return out
