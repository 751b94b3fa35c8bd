"""``--compat robojudge``: RoboJudge's published scorer (``code/evaluate.py`` of
``SiyuanMaCS/robojudge-iclr2027``), reproduced exactly.

Where it differs from gaze's protocol (``gaze.metrics.agreement``; ``docs/compat.md`` gives an
example of each):

- the gold score is rounded half-to-even to an integer before every metric (a 3.5 average
  becomes 4, a 2.5 becomes 2);
- "exact" and "within 1" compare the gold with the prediction rounded half-up and clamped to
  1-5; Pearson, Spearman and MSE use the prediction as it is;
- "Overall" pools both axes' pairs for Pearson, exact and MSE, and exists only when both axes
  have pairs;
- a prediction of 0.0 is a score like any other; a repeated item is scored every time it
  appears.

Pure functions of (gold, prediction) pairs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

Pair = tuple[float, float]
"""(gold as given, prediction)."""


def gold_score(value: float) -> int:
    """The gold as the scorer holds it: Python's round, half to even."""
    return int(round(float(value)))


def rounded_prediction(value: float) -> int:
    return min(5, max(1, math.floor(value + 0.5)))


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    num = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    den = math.sqrt(sum((x - mx) ** 2 for x in xs) * sum((y - my) ** 2 for y in ys))
    return num / den if den else None


def average_ranks(values: Sequence[float]) -> list[float]:
    """Ranks from 1, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return out


def axis_scores(pairs: Sequence[Pair]) -> dict[str, float | None]:
    """Pearson, Spearman, exact, within 1 and MSE of one axis (None when there are no pairs,
    or a correlation is undefined)."""
    if not pairs:
        return {"n": 0, "pearson": None, "spearman": None, "exact": None, "within_1": None,
                "mse": None}  # fmt: skip
    gold = [float(gold_score(g)) for g, _ in pairs]
    pred = [float(p) for _, p in pairs]
    rounded = [rounded_prediction(p) for p in pred]
    n = len(pairs)
    return {
        "n": n,
        "pearson": pearson(gold, pred),
        "spearman": pearson(average_ranks(gold), average_ranks(pred)),
        "exact": sum(g == r for g, r in zip(gold, rounded, strict=True)) / n,
        "within_1": sum(abs(g - r) <= 1 for g, r in zip(gold, rounded, strict=True)) / n,
        "mse": sum((g - p) ** 2 for g, p in zip(gold, pred, strict=True)) / n,
    }


def overall_scores(pa: Sequence[Pair], ia: Sequence[Pair]) -> dict[str, float | None] | None:
    """Both axes' pairs pooled (None unless both axes have pairs)."""
    if not pa or not ia:
        return None
    pooled = [*pa, *ia]
    gold = [float(gold_score(g)) for g, _ in pooled]
    pred = [float(p) for _, p in pooled]
    n = len(pooled)
    return {
        "n": n,
        "pearson": pearson(gold, pred),
        "exact": sum(g == rounded_prediction(p) for g, p in zip(gold, pred, strict=True)) / n,
        "mse": sum((g - p) ** 2 for g, p in zip(gold, pred, strict=True)) / n,
    }


def scores(pairs: Mapping[str, Sequence[Pair]]) -> dict[str, Any]:
    """The scorer's whole output for ``{"pa": pairs, "ia": pairs}``, labelled as compat."""
    return {
        "compat": "robojudge: RoboJudge's published scorer (docs/compat.md)",
        "pa": axis_scores(pairs["pa"]),
        "ia": axis_scores(pairs["ia"]),
        "overall": overall_scores(pairs["pa"], pairs["ia"]),
    }
