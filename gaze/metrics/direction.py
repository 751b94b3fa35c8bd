"""Scoring a progress judge against rising/falling interval labels (DESIGN section 7).

The curve is taken as given, one value per second (step t at time t s). d_t = p_t - p_{t-1}
for t >= 1; m_t is the mean of d over step t and up to four previous steps; sign(m_t) predicts
rising (+1) or falling (-1); 0 (or no m_t, at t = 0) is no prediction: a miss for the true class
and a false positive for neither. A labelled interval [s, e] holds the steps s <= t <= e; its
first two and last two steps are dropped. Counts are pooled over episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

WINDOW = 5
EDGE = 2


def predictions(curve: Sequence[float]) -> np.ndarray:
    """+1, -1 or 0 per step."""
    p = np.asarray(curve, dtype=np.float64)
    out = np.zeros(len(p), dtype=np.int64)
    if len(p) < 2:
        return out
    d = np.diff(p)  # d[t-1] = p_t - p_{t-1}
    for t in range(1, len(p)):
        m = float(np.mean(d[max(0, t - WINDOW) : t]))
        out[t] = int(np.sign(m))
    return out


def labelled_steps(
    intervals: Sequence[tuple[float, float, int]], length: int
) -> list[tuple[int, int]]:
    """(step, label) for every evaluated step: inside an interval, not among its two first or
    two last steps, and within the curve."""
    out = []
    for start, end, label in intervals:
        steps = [t for t in range(length) if start <= t <= end]
        for t in steps[EDGE : len(steps) - EDGE]:
            out.append((t, label))
    return out


def score(
    episodes: Sequence[tuple[Sequence[float], Sequence[tuple[float, float, int]]]],
) -> dict[str, Any]:
    counts = {c: {"tp": 0, "fp": 0, "fn": 0} for c in (1, -1)}
    correct = evaluated = 0
    for curve, intervals in episodes:
        pred = predictions(curve)
        for t, label in labelled_steps(intervals, len(pred)):
            evaluated += 1
            guess = int(pred[t])
            if guess == label:
                correct += 1
                counts[label]["tp"] += 1
            else:
                counts[label]["fn"] += 1
                if guess in counts:
                    counts[guess]["fp"] += 1
    per_class = {}
    for name, c in (("rising", 1), ("falling", -1)):
        tp, fp, fn = counts[c]["tp"], counts[c]["fp"], counts[c]["fn"]
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[name] = {"precision": precision, "recall": recall, "f1": f1}
    return {
        "macro_f1": (per_class["rising"]["f1"] + per_class["falling"]["f1"]) / 2,
        "accuracy": correct / evaluated if evaluated else None,
        **per_class,
        "n": evaluated,
    }
