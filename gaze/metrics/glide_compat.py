"""GLiDE's published scorer, reproduced exactly (``gaze bench score --format glide --compat
glide-code``), as ``evaluation/evaluator.py`` of SandyyyZheng/BugAgent (commit 1503e69) computes
it. Where it differs from gaze's own glide protocol is listed in docs/compat.md.

Contract, per video present in both files (every other video, on either side, is ignored):
- ratings R (N predicted x M reference bugs) are integers 0-5; a [0, 1] judge's s gives
  round(5s) (GLiDE asks an LLM for an integer rating);
- Hungarian assignment maximising R keeps all min(N, M) pairs, rating 0 included; ties are
  broken as ``scipy.optimize.linear_sum_assignment(-R)`` breaks them;
- a pair's IoU is over its bugs' interval lists: each side's intervals merged (sorted, joined
  where the next starts at or before the last ends), the intersection is the merged union of
  every pairwise overlap longer than zero; union = |A| + |B| - |A∩B|; IoU 1 when both lists are
  empty or the union is 0 with no intersection (two zero-length intervals anywhere), 0 when one
  list is empty; a bug beyond its list of time nodes has no intervals;
- pooled over the dataset: P = ΣR/(5ΣN), R = ΣR/(5ΣM), F1; the IoU-weighted P, R, F1 with
  R·IoU; mean rating and mean IoU over all kept pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from gaze.formats.glide import GlideVideo, Interval
from gaze.matching.robogaze import f1
from gaze.matching.spans import merged

PEER = "glide-code (SandyyyZheng/BugAgent evaluation/evaluator.py @1503e69)"

Rater = Callable[[Sequence[tuple[str, str]]], np.ndarray]
"""(predicted description, reference description) pairs -> ratings 0-5."""


def _duration(intervals: Sequence[Interval]) -> float:
    return sum(end - start for start, end in merged(intervals))


def interval_iou(reference: Sequence[Interval], predicted: Sequence[Interval]) -> float:
    """GLiDE's temporal IoU of two interval lists (conventions in the module docstring)."""
    if not reference and not predicted:
        return 1.0
    if not reference or not predicted:
        return 0.0
    overlaps = [
        (max(rs, ps), min(re_, pe))
        for rs, re_ in reference
        for ps, pe in predicted
        if max(rs, ps) < min(re_, pe)
    ]
    inter = _duration(overlaps)
    union = _duration(reference) + _duration(predicted) - inter
    if union == 0:
        return 1.0 if inter == 0 else 0.0
    return max(0.0, min(1.0, inter / union))


def _nodes(video: GlideVideo, index: int) -> list[Interval]:
    return video.time_nodes[index] if index < len(video.time_nodes) else []


def score_video(reference: GlideVideo, predicted: GlideVideo, rate: Rater) -> dict[str, Any]:
    n, m = len(predicted.bugs), len(reference.bugs)
    result: dict[str, Any] = {"video_name": reference.name, "gt_num": m, "pred_num": n}
    result.update(matched_scores=[], matched_ious=[], matches=[])
    if n == 0 or m == 0:
        return result
    pairs = [(p, r) for p in predicted.bugs for r in reference.bugs]
    ratings = np.asarray(rate(pairs), dtype=np.float64).reshape(n, m)
    rows, cols = linear_sum_assignment(-ratings)
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        score = int(ratings[i, j])
        iou = interval_iou(_nodes(reference, j), _nodes(predicted, i))
        result["matched_scores"].append(score)
        result["matched_ious"].append(iou)
        result["matches"].append({"pred_idx": i, "gt_idx": j, "score": score, "iou": iou})
    result["score_matrix"] = ratings.astype(int).tolist()
    return result


def glide_code_score(
    reference: dict[str, GlideVideo], predicted: dict[str, GlideVideo], rate: Rater
) -> dict[str, Any]:
    """The ``summary`` and ``video_results`` GLiDE's evaluator writes, for the same inputs."""
    common = sorted(set(reference) & set(predicted))
    videos = [score_video(reference[v], predicted[v], rate) for v in common]
    scores = [s for v in videos for s in v["matched_scores"]]
    ious = [u for v in videos for u in v["matched_ious"]]
    n = sum(v["pred_num"] for v in videos)
    m = sum(v["gt_num"] for v in videos)
    weighted = sum(s * u for s, u in zip(scores, ious, strict=True))
    p, r = (sum(scores) / (5 * n) if n else 0.0), (sum(scores) / (5 * m) if m else 0.0)
    pu, ru = (weighted / (5 * n) if n else 0.0), (weighted / (5 * m) if m else 0.0)
    summary = {
        "num_videos": len(common),
        "num_gt_bugs": m,
        "num_pred_bugs": n,
        "num_matched": len(scores),
        "mean_score": float(np.mean(scores)) if scores else 0.0,
        "mean_iou": float(np.mean(ious)) if ious else 0.0,
        "precision": p,
        "recall": r,
        "f1": f1(p, r),
        "precision_iou": pu,
        "recall_iou": ru,
        "f1_iou": f1(pu, ru),
    }
    return {
        "compat": PEER,
        "summary": summary,
        "video_results": videos,
        "left_out": {
            "reference_only": sorted(set(reference) - set(predicted)),
            "predicted_only": sorted(set(predicted) - set(reference)),
        },
    }
