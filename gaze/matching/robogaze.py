"""The robogaze matching protocol (DESIGN section 6), per clip.

Contract (in the manner of DETR's HungarianMatcher):
  inputs   N predicted and M reference events of one clip; ``iou`` (N, M) frame-level IoU;
           ``similarity`` (N, M) description similarity S in [0, 1], only read where IoU > 0;
           primary dimensions of both sides.
  cost     C_ij = S_ij * IoU_ij * (1 + 0.25 * [same primary dimension]); pairs with C = 0 drop.
  matching Hungarian assignment maximising the sum of C; matched pairs are the assigned pairs
           with C > 0. Every prediction and reference is in at most one pair. Where several
           assignments tie on C, the larger total S wins, then the events' canonical order
           (never their positions in the input).
  output   ``ClipMatch``: matched (i, j) pairs with their S and IoU, the unmatched prediction
           indices and the unmatched reference indices.
  metrics  P = sum(S)/N (0 when N = 0), R = sum(S)/M, F1 their harmonic mean (0 when P + R = 0);
           F1xIoU the same with S*IoU in place of S; mIoU the mean IoU over matched pairs
           (0 if none).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gaze.matching.assignment import assign

VERSION = 1
"""This protocol as implemented here; bumped whenever a change alters a number it gives
(scores files record it, so two files say whether they can be compared)."""

SAME_DIMENSION_BONUS = 0.25


@dataclass
class ClipMatch:
    """Matched pairs and what was left unmatched, for one clip."""

    pairs: list[tuple[int, int]] = field(default_factory=list)
    similarity: list[float] = field(default_factory=list)
    iou: list[float] = field(default_factory=list)
    unmatched_pred: list[int] = field(default_factory=list)
    unmatched_ref: list[int] = field(default_factory=list)


def cost_matrix(
    iou: np.ndarray,
    similarity: np.ndarray,
    pred_dims: Sequence[str | None],
    ref_dims: Sequence[str | None],
) -> np.ndarray:
    """C = S * IoU * (1 + 0.25 * [same primary dimension]); an event without a dimension (a
    peer's untyped event) shares none."""
    same = np.array(
        [[p is not None and p == r for r in ref_dims] for p in pred_dims], dtype=np.float64
    )
    same = same.reshape(len(pred_dims), len(ref_dims))
    s = np.where(iou > 0, similarity, 0.0)
    cost: np.ndarray = s * iou * (1.0 + SAME_DIMENSION_BONUS * same)
    return cost


def match(
    iou: np.ndarray,
    similarity: np.ndarray,
    pred_dims: Sequence[str | None],
    ref_dims: Sequence[str | None],
    pred_keys: Sequence[Hashable] | None = None,
    ref_keys: Sequence[Hashable] | None = None,
) -> ClipMatch:
    """Matched pairs; with ``pred_keys`` / ``ref_keys`` (one sortable key per event) the result
    does not depend on the order the events are listed in (``gaze.matching.assignment``)."""
    n, m = len(pred_dims), len(ref_dims)
    out = ClipMatch()
    if n and m:
        cost = cost_matrix(iou, similarity, pred_dims, ref_dims)
        secondary = np.where(cost > 0, similarity, 0.0)
        for i, j in assign(cost, secondary, pred_keys, ref_keys):
            if cost[i, j] > 0:
                out.pairs.append((i, j))
                out.similarity.append(float(similarity[i, j]))
                out.iou.append(float(iou[i, j]))
    matched_p = {i for i, _ in out.pairs}
    matched_r = {j for _, j in out.pairs}
    out.unmatched_pred = [i for i in range(n) if i not in matched_p]
    out.unmatched_ref = [j for j in range(m) if j not in matched_r]
    return out


@dataclass(frozen=True)
class ClipScores:
    """Per-clip description metrics of the robogaze protocol."""

    n: int
    m: int
    precision: float
    recall: float
    f1: float
    f1_x_iou: float
    miou: float


def f1(p: float, r: float) -> float:
    """Harmonic mean of precision and recall; 0 when both are 0."""
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def clip_scores(result: ClipMatch, n: int, m: int) -> ClipScores:
    s = np.asarray(result.similarity, dtype=np.float64)
    u = np.asarray(result.iou, dtype=np.float64)
    precision = float(s.sum() / n) if n else 0.0
    recall = float(s.sum() / m) if m else 0.0
    p_iou = float((s * u).sum() / n) if n else 0.0
    r_iou = float((s * u).sum() / m) if m else 0.0
    return ClipScores(
        n=n,
        m=m,
        precision=precision,
        recall=recall,
        f1=f1(precision, recall),
        f1_x_iou=f1(p_iou, r_iou),
        miou=float(u.mean()) if u.size else 0.0,
    )


def is_severe(severity: float) -> bool:
    """Severity >= 4 after rounding a fractional (averaged) severity up: 3.5 counts."""
    return bool(np.ceil(severity - 1e-9) >= 4)
