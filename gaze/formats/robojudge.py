"""RoboJudge's files (``SiyuanMaCS/robojudge-iclr2027``): the gold file (``data/test/*.jsonl``:
``item_id``, ``dataset``, ``model``, ``task``, ``physical_adherence``, ``instruction_alignment``
and six 0-2 sub-scores) and a judge's prediction file (``results/*/predictions/*.jsonl``: the
same ids with the judge's two scores, reasons and an ``error`` field).

Read as RoboJudge's scorer reads them, so its numbers can be reproduced: a repeated gold id
keeps its last row; every prediction row is a pair, a repeated id included; an id is matched
with its ``.mp4`` suffix dropped, or with the ``data__`` prefix added when only that form is in
the gold; a prediction score that is not a number is counted as null; 0.0 is a score. Prediction
rows that carry only a free-text answer (``predict``) are left out and counted (gaze does not
parse free text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gaze.formats.jsonl import json_rows
from gaze.formats.summary import ImportSummary

AXES = {
    "pa": ("physical_adherence", "pa", "pa_score"),
    "ia": ("instruction_alignment", "ia", "ia_score"),
}
ID_KEYS = ("item_id", "id", "video_id", "uid")

Pairs = dict[str, list[tuple[float, float]]]
"""Per axis ("pa", "ia"): (gold as given, prediction) pairs, in prediction-file order."""


def _item_id(row: dict[str, Any]) -> str | None:
    for key in ID_KEYS:
        if row.get(key):
            return str(row[key])
    return None


def read_gold(path: Path, summary: ImportSummary) -> dict[tuple[str, str], float]:
    """(item id, axis) -> the gold score as given (a repeated id: the last row wins)."""
    gold: dict[tuple[str, str], float] = {}
    for number, row in json_rows(path):
        summary.read += 1
        item = _item_id(row)
        if item is None:
            summary.skip(f"{path.name} line {number}", "gold row without an item id")
            continue
        for axis, keys in AXES.items():
            for key in keys:
                if row.get(key) is not None:
                    if (item, axis) in gold:
                        summary.adjusted["repeated gold id: last row kept"] += 1
                    gold[(item, axis)] = float(row[key])
                    break
    return gold


def _resolve(item: str, gold: dict[tuple[str, str], float]) -> str:
    item = item.removesuffix(".mp4")
    if any((item, axis) in gold for axis in AXES):
        return item
    prefixed = f"data__{item}"
    return prefixed if any((prefixed, axis) in gold for axis in AXES) else item


def read_pairs(gold_path: Path, pred_path: Path, summary: ImportSummary) -> Pairs:
    """Every (gold, prediction) pair RoboJudge's scorer would form from these two files."""
    gold = read_gold(gold_path, summary)
    pairs: Pairs = {"pa": [], "ia": []}
    for number, row in json_rows(pred_path):
        summary.read += 1
        where = f"{pred_path.name} line {number}"
        item = _item_id(row)
        if item is None:
            summary.skip(where, "prediction row without an item id")
            continue
        item = _resolve(item, gold)
        scores = {axis: row.get(keys[0]) for axis, keys in AXES.items()}
        if all(value is None for value in scores.values()):
            summary.skip(where, "free-text prediction (no score fields): not read")
            continue
        for axis, value in scores.items():
            if value is None:
                continue
            try:
                pred = float(value)
            except (TypeError, ValueError):
                summary.skip(f"{where} {axis}", "null prediction (not a number)")
                continue
            if (item, axis) not in gold:
                summary.skip(f"{where} {axis}", "no gold score for this item")
                continue
            pairs[axis].append((gold[(item, axis)], pred))
            summary.written += 1
    return pairs
