"""RoboGaze's original scorer, reproduced exactly (``gaze bench score --compat robogaze-code``),
as ``scripts/evaluate.py`` of the original code computes it (commit 76d353d, kept in
``khang123452/RoboGaze_Ego``). Where it differs from gaze's own robogaze protocol is listed in
docs/compat.md.

Contract, per clip that has both a ground truth and a report (clips without a report are
dropped; they are listed under ``left_out``):
  inputs   N predicted and M reference events with integer frames, an integer severity, a
           dimension and a description; a judge's S in [0, 1] per (prediction, reference) pair
           (the original's is the sum of three 0-5 axes over 15), asked only where IoU > 0.
  IoU      on frame numbers as points: max(0, min(ends) - max(starts)) / (max(ends) -
           min(starts)), 0 when that union is 0 (no +1: two equal one-frame spans give 0).
  cost     C = S * IoU * (1 + 0.25 * [same dimension]); ``linear_sum_assignment(C,
           maximize=True)``, pairs with C > 1e-9 kept; ties as scipy breaks them.
  per clip P = ΣS/N, R = ΣS/M, F1; F1xIoU from ΣS*IoU; mIoU over matched pairs (0 if none);
           severity within 1 over matched pairs (0 when nothing matched); severity-weighted
           P = ΣS*sev_pred/Σsev_pred, R = ΣS*sev_ref/Σsev_ref; per-dimension F1 from the pairs
           whose two sides are both of the dimension, NaN when neither side has the dimension.
           Every per-clip value is rounded to 4 decimals before the means.
  summary  macro means over the clips with at least one reference event (NaN values left out),
           rounded to 4; 95% intervals from 1000 resamples of those clips with Python's
           ``random.Random(0)``; per-dimension F1 averaged over the clips where it is defined;
           clip detection (clean vs glitchy) over every paired clip.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from scipy.optimize import linear_sum_assignment

from gaze.formats.robogaze_code import CodeClip, CodeEvent
from gaze.matching.robogaze import SAME_DIMENSION_BONUS, f1

PEER = "robogaze-code (RoboGaze scripts/evaluate.py @76d353d, via khang123452/RoboGaze_Ego)"
EPS = 1e-9
DIMENSIONS = (
    "instruction_consistency",
    "task_progress",
    "object_scene_consistency",
    "robot_body_consistency",
    "physical_plausibility",
    "visual_quality",
)
"""The original taxonomy's dimensions, in its order (the same six names as gaze's codebook)."""
CLIP_KEYS = (
    "N_pred",
    "M_gt",
    "A_matched",
    "P_desc",
    "R_desc",
    "F1_desc",
    "mIoU",
    "P_F1xIoU",
    "R_F1xIoU",
    "F1xIoU",
    "sev_within_1",
    "sev_weighted_P",
    "sev_weighted_R",
    "sev_weighted_F1",
)

Similarity = Callable[[Sequence[tuple[str, str]]], Iterable[float]]
"""(predicted description, reference description) pairs -> S in [0, 1]."""


def frame_iou(a: CodeEvent, b: CodeEvent) -> float:
    inter = max(0, min(a.end_frame, b.end_frame) - max(a.start_frame, b.start_frame))
    union = max(a.end_frame, b.end_frame) - min(a.start_frame, b.start_frame)
    return inter / union if union > 0 else 0.0


def _rounded(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


def _is_nan(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _mean(values: Sequence[Any]) -> float:
    clean = [v for v in values if not _is_nan(v) and v != ""]
    return sum(clean) / len(clean) if clean else 0.0


ORIGINAL_RESAMPLES = 1000
"""The original scorer's resample count (its own constant, not gaze's ``RESAMPLES``)."""


def bootstrap_ci(
    values: Sequence[float], n: int = ORIGINAL_RESAMPLES, seed: int = 0
) -> list[float]:
    """The original's percentile interval: ``n`` resamples drawn with ``random.Random(seed)``."""
    clean = [v for v in values if not _is_nan(v)]
    if not clean:
        return [0.0, 0.0]
    rng = random.Random(seed)
    means = []
    for _ in range(n):
        draw = [clean[rng.randrange(len(clean))] for _ in clean]
        means.append(sum(draw) / len(draw))
    means.sort()
    return [round(means[int(0.025 * n)], 4), round(means[int(0.975 * n)], 4)]


def _clip_metrics(
    preds: list[CodeEvent],
    refs: list[CodeEvent],
    sim: list[list[float]],
    iou: list[list[float]],
    matches: list[tuple[int, int]],
    dimensions: Sequence[str],
) -> dict[str, Any]:
    n, m, k = len(preds), len(refs), len(matches)
    sum_s = sum(sim[i][j] for i, j in matches)
    sum_si = sum(sim[i][j] * iou[i][j] for i, j in matches)
    p, r = (sum_s / n if n else 0.0), (sum_s / m if m else 0.0)
    pu, ru = (sum_si / n if n else 0.0), (sum_si / m if m else 0.0)
    sev_pd, sev_rd = sum(e.severity for e in preds), sum(e.severity for e in refs)
    sev_p = sum(sim[i][j] * preds[i].severity for i, j in matches) / sev_pd if sev_pd else 0.0
    sev_r = sum(sim[i][j] * refs[j].severity for i, j in matches) / sev_rd if sev_rd else 0.0
    per_dim: dict[str, float] = {}
    for dim in dimensions:
        n_dim = sum(e.dimension == dim for e in preds)
        m_dim = sum(e.dimension == dim for e in refs)
        if not n_dim and not m_dim:
            per_dim[dim] = math.nan
            continue
        both = sum(
            sim[i][j] for i, j in matches if preds[i].dimension == dim and refs[j].dimension == dim
        )
        per_dim[dim] = f1(both / n_dim if n_dim else 0.0, both / m_dim if m_dim else 0.0)
    within = sum(abs(preds[i].severity - refs[j].severity) <= 1 for i, j in matches)
    return {
        "N_pred": n,
        "M_gt": m,
        "A_matched": k,
        "P_desc": p,
        "R_desc": r,
        "F1_desc": f1(p, r),
        "mIoU": sum(iou[i][j] for i, j in matches) / k if k else 0.0,
        "P_F1xIoU": pu,
        "R_F1xIoU": ru,
        "F1xIoU": f1(pu, ru),
        "sev_within_1": within / k if k else 0.0,
        "sev_weighted_P": sev_p,
        "sev_weighted_R": sev_r,
        "sev_weighted_F1": f1(sev_p, sev_r),
        "per_dim": per_dim,
    }


def _clip_detection(pairs: Sequence[tuple[CodeClip, CodeClip]]) -> dict[str, Any]:
    tn = fp = fn = tp = 0
    for truth, report in pairs:
        clean, said_clean = not truth.events, not report.events
        tn += clean and said_clean
        fp += clean and not said_clean
        fn += (not clean) and said_clean
        tp += (not clean) and not said_clean
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "n_clips": len(pairs),
        "n_clean_gt": tn + fp,
        "n_glitchy_gt": fn + tp,
        "TN": tn,
        "FP": fp,
        "FN": fn,
        "TP": tp,
        "clean_clip_accuracy": _rounded(tn / (tn + fp) if tn + fp else 0.0),
        "glitchy_clip_recall": _rounded(tp / (tp + fn) if tp + fn else 0.0),
        "precision": _rounded(precision),
        "recall": _rounded(recall),
        "F1": _rounded(f1(precision, recall)),
    }


def _matrices(
    preds: list[CodeEvent], refs: list[CodeEvent], similarity: dict[tuple[str, str], float]
) -> tuple[list[list[float]], list[list[float]], list[list[float]]]:
    iou = [[frame_iou(p, r) for r in refs] for p in preds]
    sim = [
        [
            similarity[(p.description, r.description)] if iou[i][j] > 0 else 0.0
            for j, r in enumerate(refs)
        ]
        for i, p in enumerate(preds)
    ]
    cost = [
        [
            sim[i][j] * iou[i][j] * (1.0 + SAME_DIMENSION_BONUS * (p.dimension == r.dimension))
            for j, r in enumerate(refs)
        ]
        for i, p in enumerate(preds)
    ]
    return iou, sim, cost


def needed_pairs(pairs: Sequence[tuple[CodeClip, CodeClip]]) -> list[tuple[str, str]]:
    """The (prediction, reference) descriptions the original asks its judge about: IoU > 0."""
    wanted: set[tuple[str, str]] = set()
    for truth, report in pairs:
        for p in report.events:
            for r in truth.events:
                if frame_iou(p, r) > 0:
                    wanted.add((p.description, r.description))
    return sorted(wanted)


def robogaze_code_score(
    pairs: Sequence[tuple[CodeClip, CodeClip]], similarity: Similarity
) -> dict[str, Any]:
    """``summary.json``'s numbers and the per-clip, per-dimension and match rows the original
    writes as CSV, for (ground truth, report) pairs in its order."""
    wanted = needed_pairs(pairs)
    table = dict(zip(wanted, (float(s) for s in similarity(wanted)), strict=True))
    clip_rows, dim_rows, match_rows = [], [], []
    for truth, report in pairs:
        preds, refs = report.events, truth.events
        iou, sim, cost = _matrices(preds, refs, table)
        matches: list[tuple[int, int]] = []
        if preds and refs:
            rows, cols = linear_sum_assignment(cost, maximize=True)
            matches = [
                (int(i), int(j)) for i, j in zip(rows, cols, strict=True) if cost[i][j] > EPS
            ]
        metrics = _clip_metrics(preds, refs, sim, iou, matches, DIMENSIONS)
        clip_rows.append(
            {"video_id": truth.video_id, **{k: _rounded(metrics[k]) for k in CLIP_KEYS}}
        )
        for dim, value in metrics["per_dim"].items():
            dim_rows.append(
                {
                    "video_id": truth.video_id,
                    "dimension": dim,
                    "F1_desc": "" if _is_nan(value) else round(value, 4),
                }
            )
        for i, j in matches:
            match_rows.append(
                {
                    "video_id": truth.video_id,
                    "pred_event_id": preds[i].id,
                    "gt_event_id": refs[j].id,
                    "S": round(sim[i][j], 4),
                    "IoU": round(iou[i][j], 4),
                    "C": round(cost[i][j], 4),
                }
            )
    events = [row for row in clip_rows if row["M_gt"] > 0]
    summary = {
        "n_clips": len(pairs),
        "n_event_eval_clips": len(events),
        "macro_F1_desc": _rounded(_mean([r["F1_desc"] for r in events])),
        "macro_F1_desc_CI95": bootstrap_ci([r["F1_desc"] for r in events]),
        "macro_mIoU": _rounded(_mean([r["mIoU"] for r in events])),
        "macro_F1xIoU": _rounded(_mean([r["F1xIoU"] for r in events])),
        "macro_F1xIoU_CI95": bootstrap_ci([r["F1xIoU"] for r in events]),
        "macro_sev_within_1": _rounded(_mean([r["sev_within_1"] for r in events])),
        "macro_sev_weighted_F1": _rounded(_mean([r["sev_weighted_F1"] for r in events])),
        "per_dim_F1_desc": {
            dim: _rounded(_mean([r["F1_desc"] for r in dim_rows if r["dimension"] == dim]))
            for dim in DIMENSIONS
        },
        "clip_detection": _clip_detection(pairs),
    }
    return {
        "compat": PEER,
        "summary": summary,
        "per_clip": clip_rows,
        "per_dim": dim_rows,
        "matches": match_rows,
    }
