"""Agreement of 1-5 judge scores with human scores (DESIGN section 7), with a cluster bootstrap.

exact: |pred - human| < 0.5 (a human average of 3.5 matches neither 3 nor 4 exactly);
within_1: |pred - human| <= 1; over/under: pred above/below human by at least 0.5.
"overall" pools the PA and IA pairs for Pearson and MSE and averages the two accuracies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats

TOLERANCE = 0.5


def _corr(fn: Callable[..., Any], a: np.ndarray, b: np.ndarray) -> float | None:
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return float(fn(a, b)[0])


def axis_agreement(
    pred: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray
) -> dict[str, float | None]:
    p = np.asarray(pred, dtype=np.float64)
    h = np.asarray(human, dtype=np.float64)
    n = len(p)
    if n == 0:
        return {
            k: None
            for k in ("pearson", "spearman", "exact", "within_1", "mse", "over_rate", "under_rate")
        } | {"n": 0}
    diff = p - h
    return {
        "pearson": _corr(stats.pearsonr, p, h),
        "spearman": _corr(stats.spearmanr, p, h),
        "exact": float(np.mean(np.abs(diff) < TOLERANCE)),
        "within_1": float(np.mean(np.abs(diff) <= 1.0)),
        "mse": float(np.mean(diff**2)),
        "over_rate": float(np.mean(diff >= TOLERANCE)),
        "under_rate": float(np.mean(diff <= -TOLERANCE)),
        "n": n,
    }


def overall(
    pa: dict[str, Any],
    ia: dict[str, Any],
    pa_pairs: tuple[np.ndarray, np.ndarray],
    ia_pairs: tuple[np.ndarray, np.ndarray],
) -> dict[str, float | None]:
    pred = np.concatenate([pa_pairs[0], ia_pairs[0]])
    human = np.concatenate([pa_pairs[1], ia_pairs[1]])
    both = [x for x in (pa.get("exact"), ia.get("exact")) if x is not None]
    within = [x for x in (pa.get("within_1"), ia.get("within_1")) if x is not None]
    return {
        "pearson": _corr(stats.pearsonr, pred, human),
        "mse": float(np.mean((pred - human) ** 2)) if len(pred) else None,
        "exact": float(np.mean(both)) if both else None,
        "within_1": float(np.mean(within)) if within else None,
    }
