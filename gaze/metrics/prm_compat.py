"""``--compat prm``: the PRM-as-a-Judge toolkit's scorer (v1.5), reproduced exactly.

Where gaze's own protocol (``gaze.metrics.progress``, DESIGN section 7) and the toolkit's
``eval/prm_judge/metrics.py`` differ, this module follows the toolkit (``docs/compat.md`` lists
each difference with an example):

- per case, DRR is 1.0 for a rollout without drawdown (gaze: not defined), and SR comes from the
  curve (MP >= 0.99) even when labels are used: labels only enter the aggregates;
- an aggregate over an empty eligible subset is 0.0 (gaze: null);
- the median table repeats the binary rates (M25, M50, M75, SR as means; gaze: no median);
- FNS and SQS exist only in the aggregates, computed per case from the aggregate's SR;
- groups are (benchmark, model, task_name) and the leaderboard (benchmark, model), with the
  toolkit's defaults ``manifest``, ``default`` and ``all`` for missing fields;
- metric names are the toolkit's: M25, M50, M75 (gaze: MC25, MC50, MC75).

Pure functions of processed curves and rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from statistics import mean, median
from typing import Any

from gaze.formats.prm import FAILURE_LABELS, SUCCESS_LABELS

SUCCESS_LEVEL = 0.99
STILL_STEP = 0.005
DRAWDOWN_TOLERANCE = 1e-12
DRR_EPSILON = 1e-6
BINARY = ("M25", "M50", "M75", "SR")
CONTINUOUS = ("MP", "PPL", "CRA", "STR", "DRR", "FNS", "SQS")


def case_metrics(curve: Sequence[float]) -> dict[str, float]:
    """The toolkit's per-case metrics of a processed curve (0-1)."""
    p = [float(v) for v in curve]
    if not p:
        empty = dict.fromkeys(("M25", "M50", "M75", "SR", "MP", "PPL", "CRA", "STR"), 0.0)
        return {**empty, "DRR": 1.0}
    mp = max(p)
    series = [0.0, *p]
    length = sum(abs(series[i] - series[i - 1]) for i in range(1, len(series)))
    ppl = mp * mp / length if length > 1e-9 else 0.0
    regret = still = 0.0
    peak = 0.0
    for i in range(1, len(series)):
        peak = max(peak, series[i])
        regret += max(0.0, peak - series[i])
        still += abs(series[i] - series[i - 1]) < STILL_STEP
    cra = regret / len(p) / mp if mp > 0.0 else 0.0
    return {
        "M25": float(mp >= 0.25),
        "M50": float(mp >= 0.50),
        "M75": float(mp >= 0.75),
        "SR": float(mp >= SUCCESS_LEVEL),
        "MP": mp,
        "PPL": max(0.0, min(1.0, ppl)),
        "CRA": cra,
        "STR": still / len(p),
        "DRR": drawdown_recovery(p),
    }


def drawdown_recovery(p: Sequence[float]) -> float:
    """Recovery after the largest drop from a running peak (the peak starts at p_1), 1.0 when
    no drop exceeds the tolerance."""
    if not p:
        return 1.0
    peak, deepest, trough = p[0], 0.0, 0
    for i, value in enumerate(p):
        peak = max(peak, value)
        if peak - value > deepest:
            deepest, trough = peak - value, i
    if deepest <= DRAWDOWN_TOLERANCE:
        return 1.0
    recovered = max(p[trough:]) - p[trough]
    return max(0.0, min(1.0, (recovered + DRR_EPSILON) / (deepest + DRR_EPSILON)))


def has_drawdown(p: Sequence[float]) -> bool:
    if not p:
        return False
    peak = p[0]
    for value in p[1:]:
        if peak - value > DRAWDOWN_TOLERANCE:
            return True
        peak = max(peak, value)
    return False


def succeeded(case: dict[str, Any], source: str) -> bool:
    """The aggregate's success of a case: its label when ``source`` is 'label' and the label is
    one the toolkit knows, else the curve."""
    if source == "label":
        label = str(case.get("label") or "").lower()
        if label in SUCCESS_LABELS:
            return True
        if label in FAILURE_LABELS:
            return False
    return bool(case["metrics"]["MP"] >= SUCCESS_LEVEL)


def _eligible(cases: Sequence[dict[str, Any]], source: str) -> dict[str, list[float]]:
    values = {
        name: [float(c["metrics"][name]) for c in cases]
        for name in ("M25", "M50", "M75", "MP", "PPL", "CRA", "STR")
    }
    wins = [succeeded(c, source) for c in cases]
    values["SR"] = [float(w) for w in wins]
    values["DRR"] = [float(c["metrics"]["DRR"]) for c in cases if has_drawdown(c["curve"])]
    values["FNS"] = [
        0.5 * c["metrics"]["MP"] + 0.3 * c["metrics"]["M75"] + 0.2 * c["metrics"]["M50"]
        for c, won in zip(cases, wins, strict=True)
        if not won
    ]
    values["SQS"] = [
        max(
            0.0,
            min(
                1.0,
                0.5 * c["metrics"]["PPL"]
                + 0.3 * (1.0 - c["metrics"]["CRA"])
                + 0.2 * (1.0 - c["metrics"]["STR"]),
            ),
        )
        for c, won in zip(cases, wins, strict=True)
        if won
    ]
    return values


def summarize(cases: Sequence[dict[str, Any]], source: str) -> dict[str, dict[str, float]]:
    """Mean and median tables of a set of cases: an empty subset is 0.0; the median table
    carries the binary rates as means."""
    values = _eligible(cases, source)
    means = {n: mean(values[n]) if values[n] else 0.0 for n in (*BINARY, *CONTINUOUS)}
    medians = {n: means[n] for n in BINARY}
    medians.update({n: median(values[n]) if values[n] else 0.0 for n in CONTINUOUS})
    return {"mean": means, "median": medians}


def leaderboards(cases: Sequence[dict[str, Any]], source: str) -> dict[str, list[dict[str, Any]]]:
    """Rows per (benchmark, model) and groups per (benchmark, model, task), as the toolkit
    sorts them. Each case: ``benchmark``, ``model``, ``task``, ``curve``, ``metrics``,
    optional ``label``."""
    by_model: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    by_group: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for case in cases:
        by_model[(case["benchmark"], case["model"])].append(case)
        by_group[(case["benchmark"], case["model"], case["task"])].append(case)
    board: dict[str, list[dict[str, Any]]] = {"mean": [], "median": [], "groups": []}
    for (benchmark, model), items in sorted(by_model.items()):
        head = {
            "benchmark": benchmark,
            "model": model,
            "num_tasks": len({c["task"] for c in items}),
            "num_cases": len(items),
        }
        tables = summarize(items, source)
        board["mean"].append({**head, **tables["mean"]})
        board["median"].append({**head, **tables["median"]})
    for (benchmark, model, task), items in sorted(by_group.items()):
        head = {"benchmark": benchmark, "model": model, "task": task, "num_cases": len(items)}
        board["groups"].append({**head, **summarize(items, source)["mean"]})
    return board
