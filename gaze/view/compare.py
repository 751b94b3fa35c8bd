"""Two runs on one manifest, clip by clip: the reference events beside each run's events, with
pairs, false alarms and misses marked exactly as the scorer matched them."""

from __future__ import annotations

from typing import Any

from gaze.errors import GazeInputError
from gaze.report.templates import render
from gaze.schema.events import ScoringEvent
from gaze.view.pages import clip_href, page
from gaze.view.runs import RunData


def clip_folder(index: int) -> str:
    """Folder of run ``index``'s clip pages in the site (the first run's is ``clips``)."""
    return "clips" if index == 0 else f"clips-{index + 1}"


def scorer_matches(run: RunData) -> tuple[dict[str, dict[str, Any]], str]:
    """Per-clip matches from the run's robogaze scores file; without one, scored now with the
    type judge (no model needed); without a reachable manifest, none."""
    detail = run.scores_by_clip()
    if detail:
        source = next(s for s in run.scores if s.result.get("protocol") == "robogaze")
        return detail, f"matches from {source.name} (judge {source.result.get('judge')})"
    if run.manifest is None:
        return {}, "not matched: the run's manifest is not reachable here"
    from gaze.bench.score_job import run_score

    try:
        result = run_score(run.manifest, run.folder / "reports", judge="type", n_boot=0)
    except GazeInputError as exc:
        return {}, f"not matched: {exc}"
    per_clip = {c["clip_id"]: c for c in result["per_clip"]}
    return per_clip, "matched now by the type judge (no scores file in the run)"


def _outcome(detail: dict[str, Any]) -> tuple[tuple[int, ...], int]:
    matched = tuple(sorted(m["ref"] for m in detail.get("matched", [])))
    return matched, len(detail.get("unmatched_pred", []))


def _references(refs: list[ScoringEvent], details: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each reference event, whether each run found it, and how to mark it."""
    shown = []
    for j, ev in enumerate(refs):
        found = [j in {m["ref"] for m in d.get("matched", [])} for d in details if d]
        letters = [chr(65 + i) for i in range(len(details))]
        style = "matched" if found and all(found) else "missed" if found else ""
        shown.append(
            {"event": ev, "style": style, "badges": list(zip(letters, found, strict=False))}
        )
    return shown


def _predicted(index: int, run: RunData, clip_id: str, detail: dict[str, Any]) -> Any:
    report = run.reports.get(clip_id)
    if report is None:
        return None
    pairs = {m["pred"]: m for m in detail.get("matched", [])}
    return {
        "href": clip_href(clip_folder(index), clip_id),
        "letter": chr(65 + index),
        "scored": bool(detail),
        "events": [{"event": ev, "match": pairs.get(i)} for i, ev in enumerate(report.events)],
    }


def compare_html(runs: list[RunData]) -> str:
    matched = [scorer_matches(run) for run in runs]
    first = runs[0]
    ids = list(first.rows) or list(first.reports)
    ids += [c for run in runs[1:] for c in run.reports if c not in ids]
    rows = []
    for clip_id in ids:
        details = [m[0].get(clip_id, {}) for m in matched]
        row = next((run.rows[clip_id] for run in runs if clip_id in run.rows), None)
        differs = len({_outcome(d) for d in details}) > 1 or any(
            clip_id not in run.reports for run in runs
        )
        rows.append(
            {
                "clip_id": clip_id,
                "differs": int(differs),
                "refs": None if row is None else _references(row.events, details),
                "cells": [_predicted(i, run, clip_id, details[i]) for i, run in enumerate(runs)],
            }
        )
    heads = [
        {"label": f"{chr(65 + i)}: {run.label}", "source": m[1]}
        for i, (run, m) in enumerate(zip(runs, matched, strict=True))
    ]
    return page("gaze · runs side by side", render("compare.html.j2", heads=heads, rows=rows))
