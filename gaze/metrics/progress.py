"""Task-progress curves: unification, outlier removal, smoothing, and the OPD metrics
(DESIGN section 7). Pure functions on lists of floats.

Choices the design leaves open, fixed here: the /100 rescale is decided on the unified curve
(after accumulating increments); outliers are judged against the curve as it was before the
pass (not sequentially); the smoothing weights are divided by their float sum and renormalised
over the taps that exist at the edges; ``v1`` computes on the raw (unified) curve, with neither
outlier removal nor smoothing -- what the PRM-as-a-Judge docs site's per-step v1 values are
computed on (``tests/metrics/test_prm_v1.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

OUTLIER_JUMP = 0.35
SMOOTHING = (0.1, 0.2, 0.4, 0.2, 0.1)
SUCCESS_LEVEL = 0.99
STILL_STEP = 0.005
DRAWDOWN_MIN = 1e-12
Kind = Literal["absolute", "increments"]
METRIC_NAMES = ("MP", "MC25", "MC50", "MC75", "SR", "PPL", "CRA", "STR", "DRR", "FNS", "SQS")
BINARY = ("MC25", "MC50", "MC75", "SR")


def clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def unify(values: Sequence[float], kind: Kind = "absolute") -> np.ndarray:
    """Absolute values as they are, increments accumulated; /100 when max|v| > 1.5; clip."""
    p = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(p)):
        raise ValueError("progress values must be finite numbers")
    if kind == "increments":
        p = np.cumsum(p)
    if p.size and np.max(np.abs(p)) > 1.5:
        p = p / 100.0
    return np.clip(p, 0.0, 1.0)


def remove_outliers(p: np.ndarray) -> np.ndarray:
    """For 2 <= i <= T-3 (T >= 5): replace p_i by the median of p_{i-2}, p_{i-1}, p_{i+1},
    p_{i+2} when it differs from that median by more than OUTLIER_JUMP."""
    out = p.copy()
    if len(p) < 5:
        return out
    for i in range(2, len(p) - 2):
        med = float(np.median([p[i - 2], p[i - 1], p[i + 1], p[i + 2]]))
        if abs(p[i] - med) > OUTLIER_JUMP:
            out[i] = med
    return out


def smooth(p: np.ndarray) -> np.ndarray:
    """Centred weighted average [0.1, 0.2, 0.4, 0.2, 0.1] / their float sum, renormalised over
    the taps inside the curve at its edges."""
    total = 0.0
    for w in SMOOTHING:
        total += w
    weights = [w / total for w in SMOOTHING]
    out = np.empty_like(p)
    n = len(p)
    for i in range(n):
        acc = norm = 0.0
        for offset, w in zip(range(-2, 3), weights, strict=True):
            j = i + offset
            if 0 <= j < n:
                acc += w * p[j]
                norm += w
        out[i] = acc / norm
    return out


def process(values: Sequence[float], kind: Kind = "absolute", v1: bool = False) -> np.ndarray:
    """The curve the metrics are computed on: unified, then (except in ``v1``) outliers
    removed and smoothed."""
    p = unify(values, kind)
    return p if v1 else np.clip(smooth(remove_outliers(p)), 0.0, 1.0)


def opd_metrics(
    p: Sequence[float] | np.ndarray, success: bool | None = None, v1: bool = False
) -> dict[str, float | None]:
    """OPD metrics of a processed curve p_1..p_T (None where the rollout is not eligible)."""
    q = np.asarray(p, dtype=np.float64)
    if q.size == 0:
        return dict.fromkeys(METRIC_NAMES)
    t_len = len(q)
    with_zero = np.concatenate([[0.0], q])
    mp = float(q.max())
    steps = np.abs(np.diff(with_zero))
    length = float(steps.sum())
    reached = q[-1] if v1 else mp
    ppl = 0.0 if length <= 1e-9 else clip01(reached**2 / length)
    running = np.maximum.accumulate(with_zero)[1:]
    drawdown_mean = float(np.maximum(0.0, running - q).sum() / t_len)
    cra = drawdown_mean if v1 else 0.0 if mp == 0 else drawdown_mean / mp
    stillness = float((steps < STILL_STEP).sum() / t_len)
    d = np.maximum.accumulate(q) - q
    drr: float | None = None
    if d.max() > DRAWDOWN_MIN:
        t_star = int(np.argmax(d))
        mdd = float(d[t_star])
        recovery = float(q[t_star:].max() - q[t_star])
        drr = clip01((recovery + 1e-6) / (mdd + 1e-6))
    sr = bool(mp >= (1.0 if v1 else SUCCESS_LEVEL)) if success is None else bool(success)
    mc = {q_: float(mp >= q_) for q_ in (0.25, 0.5, 0.75)}
    metrics: dict[str, float | None] = {
        "MP": mp,
        "MC25": mc[0.25],
        "MC50": mc[0.5],
        "MC75": mc[0.75],
        "SR": float(sr),
        "PPL": ppl,
        "CRA": cra,
        "STR": stillness,
        "DRR": drr,
        "FNS": None if sr else 0.5 * mp + 0.3 * mc[0.75] + 0.2 * mc[0.5],
        "SQS": clip01(0.5 * ppl + 0.3 * (1 - cra) + 0.2 * (1 - stillness)) if sr else None,
    }
    if v1:
        metrics = {k: None if v is None else v * 100.0 for k, v in metrics.items()}
    return metrics


def aggregate(rows: Sequence[dict[str, float | None]]) -> dict[str, dict[str, float | None]]:
    """Per metric: mean and median over the rows where it is defined (None for none)."""
    out: dict[str, dict[str, float | None]] = {"mean": {}, "median": {}}
    for name in METRIC_NAMES:
        values = [r[name] for r in rows if r.get(name) is not None]
        numbers = [float(v) for v in values if v is not None and math.isfinite(float(v))]
        out["mean"][name] = float(np.mean(numbers)) if numbers else None
        out["median"][name] = None if name in BINARY or not numbers else float(np.median(numbers))
    return out


def drawdown_spans(p: Sequence[float] | np.ndarray) -> list[tuple[int, int]]:
    """Index spans ``(first, last)`` of a processed curve where it lies more than
    ``DRAWDOWN_MIN`` below its running maximum (what DRR measures recovery from)."""
    q = np.asarray(p, dtype=np.float64)
    below = (np.maximum.accumulate(q) - q > DRAWDOWN_MIN) if q.size else np.zeros(0, bool)
    spans: list[tuple[int, int]] = []
    for i, flag in enumerate(below):
        if flag and spans and spans[-1][1] == i - 1:
            spans[-1] = (spans[-1][0], i)
        elif flag:
            spans.append((max(i - 1, 0), i))  # from the last point at the peak side
    return spans
