"""RoboJudge's files (``SiyuanMaCS/robojudge-iclr2027``): the gold file (``data/test/*.jsonl``:
``item_id``, ``dataset``, ``model``, ``task``, ``physical_adherence``, ``instruction_alignment``
and six 0-2 sub-scores) and a judge's prediction file (``results/*/predictions/*.jsonl``: the
same ids with the judge's two scores, reasons and an ``error`` field).

Read as RoboJudge's scorer reads them, so its numbers can be reproduced: a repeated gold id
keeps its last row; every prediction row is a pair, a repeated id included; an id is matched
with its ``.mp4`` suffix dropped, or with the ``data__`` prefix added when only that form is in
the gold; a prediction score that is not a number is counted as null; 0.0 is a score; a gold
file may also hold one row per axis (``axis`` or ``score_type``, the score under ``gold``,
``score`` or ``label``). Prediction rows that carry only a free-text answer (``predict``) are
read as RoboJudge's scorer reads them under ``--compat robojudge``
(``gaze.formats.robojudge_text``) and left out and counted under gaze's own protocol, which
reads score fields only.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

from gaze.formats.jsonl import json_rows
from gaze.formats.summary import ImportSummary

AXES = {
    "pa": ("physical_adherence", "pa", "pa_score"),
    "ia": ("instruction_alignment", "ia", "ia_score"),
}
ID_KEYS = ("item_id", "id", "video_id", "uid")
PER_AXIS_ROW = {"PA": "pa", "PHYSICAL_ADHERENCE": "pa", "IA": "ia", "INSTRUCTION_ALIGNMENT": "ia"}
"""A gold row for one axis names it in ``axis`` or ``score_type``..."""
PER_AXIS_KEYS = ("gold", "score", "label")
"""...and holds its score under the axis's own name or one of these."""

Pairs = dict[str, list[tuple[float, float]]]
"""Per axis ("pa", "ia"): (gold as given, prediction) pairs, in prediction-file order."""


def _item_id(row: dict[str, Any]) -> str | None:
    for key in ID_KEYS:
        if row.get(key):
            return str(row[key])
    return None


def _identified_rows(
    path: Path, summary: ImportSummary, kind: str
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, item id, row) of every row of a RoboJudge file with an id; rows without one are
    counted as left out (``kind`` names the file's side: gold or prediction)."""
    for number, row in json_rows(path):
        summary.read += 1
        where = f"{path.name} line {number}"
        item = _item_id(row)
        if item is None:
            summary.skip(where, f"{kind} row without an item id")
            continue
        yield where, item, row


def read_gold(path: Path, summary: ImportSummary) -> dict[tuple[str, str], float]:
    """(item id, axis) -> the gold score as given (a repeated id: the last row wins)."""
    gold: dict[tuple[str, str], float] = {}
    for _, item, row in _identified_rows(path, summary, "gold"):
        named = PER_AXIS_ROW.get(str(row.get("axis") or row.get("score_type") or "").upper())
        by_axis = AXES if named is None else {named: (AXES[named][0], *PER_AXIS_KEYS)}
        for axis, keys in by_axis.items():
            for key in keys:
                if row.get(key) is not None:
                    if (item, axis) in gold:
                        summary.adjusted["repeated gold id: last row kept"] += 1
                    gold[(item, axis)] = float(row[key])
                    break
    return gold


def match_id(item: str, known: Container[str]) -> str:
    """A prediction's id as RoboJudge's scorer matches it to the gold's ids: ``.mp4`` dropped,
    then ``data__`` added when only that form is known; unmatched ids come back as given
    (without ``.mp4``). The one home of this rule: ``--format robojudge`` and ``--compat
    robojudge`` on converted files both use it."""
    item = item.removesuffix(".mp4")
    if item in known:
        return item
    prefixed = f"data__{item}"
    return prefixed if prefixed in known else item


def _free_text_pair(
    row: dict[str, Any], item: str, where: str, gold: dict[tuple[str, str], float]
) -> tuple[str, tuple[float, float] | None, str]:
    """(axis, pair or None, why not) of a free-text row, read as RoboJudge's scorer does."""
    from gaze.formats.robojudge_text import free_text_axis, free_text_score

    axis = free_text_axis(row)
    if axis is None:
        return "", None, "free-text prediction naming no axis: not read (as RoboJudge)"
    score = free_text_score(row.get("predict"))
    if score is None:
        return axis, None, "null prediction (no score in the free text)"
    if (item, axis) not in gold:
        return axis, None, "no gold score for this item"
    return axis, (gold[(item, axis)], float(score)), ""


def read_pairs(
    gold_path: Path, pred_path: Path, summary: ImportSummary, *, free_text: bool = False
) -> Pairs:
    """Every (gold, prediction) pair RoboJudge's scorer would form from these two files (free
    text read only when ``free_text``, as under ``--compat robojudge``)."""
    gold = read_gold(gold_path, summary)
    gold_ids = {item for item, _ in gold}
    pairs: Pairs = {"pa": [], "ia": []}
    for where, item, row in _identified_rows(pred_path, summary, "prediction"):
        item = match_id(item, gold_ids)
        scores = {axis: row.get(keys[0]) for axis, keys in AXES.items()}
        if all(value is None for value in scores.values()):
            if not free_text:
                summary.skip(where, "free-text prediction (no score fields): not read")
                continue
            axis, pair, why = _free_text_pair(row, item, where, gold)
            if pair is None:
                summary.skip(f"{where} {axis}".strip(), why)
            else:
                pairs[axis].append(pair)
                summary.written += 1
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


SUB_SCORES = (
    "agent_consistency",
    "scene_consistency",
    "interaction_realism",
    "agent_match",
    "object_correct",
    "goal_completed",
)
"""The gold file's six 0-2 sub-scores (kept under ``metadata.robojudge``)."""
GOLD_FIELDS = {"item_id", "video_url", "physical_adherence", "instruction_alignment"}


def is_gold(rows: list[tuple[int, dict[str, Any]]]) -> bool:
    """A gold file carries the sub-scores or the video URLs; a judge's file does not."""
    return any(key in row for _, row in rows for key in (*SUB_SCORES, "video_url"))


def _score(value: Any, where: str, summary: ImportSummary) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        summary.skip(where, "score is not a number (read as null)")
        return None


def manifest_rows(path: Path, summary: ImportSummary) -> list[dict[str, Any]]:
    """The gold file as manifest rows: ``item_id`` is the clip id, ``video_url`` the video,
    ``pa``/``ia`` the gold scores as given; everything else under ``metadata.robojudge``. The
    file has no instruction text: the ``task`` id stands in, counted. A repeated id keeps its
    last row, as RoboJudge's scorer does."""
    out: dict[str, dict[str, Any]] = {}
    for where, item, row in _identified_rows(path, summary, "gold"):
        if item in out:
            summary.adjusted["repeated gold id: last row kept"] += 1
        instruction = row.get("instruction") or row.get("prompt")
        if not instruction:
            instruction = row.get("task") or item
            summary.adjusted["no instruction text: the task id stands in"] += 1
        out[item] = {
            "clip_id": item,
            "video": str(row.get("video_url") or row.get("video") or f"{item}.mp4"),
            "instruction": str(instruction),
            "generator": str(row.get("model") or ""),
            "pa": _score(row.get(AXES["pa"][0]), f"{where} pa", summary),
            "ia": _score(row.get(AXES["ia"][0]), f"{where} ia", summary),
            "metadata": {"robojudge": {k: v for k, v in row.items() if k not in GOLD_FIELDS}},
        }
    summary.written = len(out)
    return list(out.values())


def prediction_rows(path: Path, summary: ImportSummary) -> list[dict[str, Any]]:
    """A judge's file as gaze predictions (``clip_id``, ``pa``, ``ia``): ids with ``.mp4``
    dropped, a non-number score null (counted), 0.0 kept as it is; free-text rows left out and
    counted; a repeated id keeps its last row (RoboJudge's scorer counts each repeat as a pair:
    score such files with ``bench agreement --format robojudge``)."""
    out: dict[str, dict[str, Any]] = {}
    for where, item, row in _identified_rows(path, summary, "prediction"):
        raw = {axis: row.get(keys[0]) for axis, keys in AXES.items()}
        if all(value is None for value in raw.values()):
            summary.skip(where, "free-text prediction (no score fields): not read")
            continue
        item = item.removesuffix(".mp4")
        if item in out:
            summary.adjusted["repeated prediction id: last row kept"] += 1
        out[item] = {
            "clip_id": item,
            **{axis: _score(value, f"{where} {axis}", summary) for axis, value in raw.items()},
        }
    summary.written = len(out)
    return list(out.values())


def gold_document(row: dict[str, Any]) -> dict[str, Any]:
    """A manifest row as a gold line (the way back)."""
    kept = dict((row.get("metadata") or {}).get("robojudge") or {})
    return {
        "item_id": row["clip_id"],
        **kept,
        "video_url": row.get("video"),
        "physical_adherence": row.get("pa"),
        "instruction_alignment": row.get("ia"),
    }


def prediction_document(row: dict[str, Any]) -> dict[str, Any]:
    """A gaze prediction as a judge's line."""
    return {
        "item_id": row["clip_id"],
        "physical_adherence": row.get("pa"),
        "instruction_alignment": row.get("ia"),
    }
