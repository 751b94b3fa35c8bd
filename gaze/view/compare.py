"""Two runs on one manifest, clip by clip: the reference events beside each run's events, with
pairs, false alarms and misses marked exactly as the scorer matched them."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from gaze.errors import GazeInputError
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


def _event_text(ev: ScoringEvent) -> str:
    return f"{escape(ev.kind)} {ev.start_s:.2f}-{ev.end_s:.2f} s · sev {ev.severity_shown}"


def predicted_list(events: Sequence[ScoringEvent], detail: dict[str, Any]) -> str:
    pairs = {m["pred"]: m for m in detail.get("matched", [])}
    items = []
    for i, ev in enumerate(events):
        match = pairs.get(i)
        if match is not None:
            items.append(
                f"<li class='matched'>{_event_text(ev)} <span class='dim'>↔ ref "
                f"#{match['ref'] + 1}, IoU {match['iou']:.2f}</span></li>"
            )
        elif detail:
            items.append(
                f"<li class='fa'>{_event_text(ev)} <span class='dim'>no reference</span></li>"
            )
        else:
            items.append(f"<li>{_event_text(ev)}</li>")
    return "<ul>" + "".join(items) + "</ul>" if items else "<p class='dim'>no events</p>"


def reference_list(
    refs: list[ScoringEvent], labels: list[str], details: list[dict[str, Any]]
) -> str:
    items = []
    for j, ev in enumerate(refs):
        found = [j in {m["ref"] for m in d.get("matched", [])} for d in details if d]
        badges = " ".join(
            f"<span class='chip'>{'found' if hit else 'missed'} by {escape(label)}</span>"
            for label, hit in zip(labels, found, strict=False)
        )
        style = "matched" if found and all(found) else "missed" if found else ""
        items.append(f"<li class='{style}'>#{j + 1} {_event_text(ev)} {badges}</li>")
    return "<ul>" + "".join(items) + "</ul>" if items else "<p class='dim'>clean clip</p>"


def _outcome(detail: dict[str, Any]) -> tuple[tuple[int, ...], int]:
    matched = tuple(sorted(m["ref"] for m in detail.get("matched", [])))
    return matched, len(detail.get("unmatched_pred", []))


def compare_html(runs: list[RunData]) -> str:
    matched = [scorer_matches(run) for run in runs]
    labels = [f"{chr(65 + i)}: {run.label}" for i, run in enumerate(runs)]
    first = runs[0]
    ids = list(first.rows) or list(first.reports)
    ids += [c for run in runs[1:] for c in run.reports if c not in ids]
    body = []
    for clip_id in ids:
        details = [m[0].get(clip_id, {}) for m in matched]
        row = next((run.rows[clip_id] for run in runs if clip_id in run.rows), None)
        cells = []
        for index, run in enumerate(runs):
            report = run.reports.get(clip_id)
            if report is None:
                cells.append("<td class='problem'>no report</td>")
                continue
            link = clip_href(clip_folder(index), clip_id)
            cells.append(
                f"<td><a href='{link}'>{chr(65 + index)}'s page</a> "
                f"{predicted_list(report.events, details[index])}</td>"
            )
        refs = (
            reference_list(row.events, [chr(65 + i) for i in range(len(runs))], details)
            if row is not None
            else "<p class='dim'>not in the manifest</p>"
        )
        differs = len({_outcome(d) for d in details}) > 1 or any(
            clip_id not in run.reports for run in runs
        )
        body.append(
            f"<tr data-differs='{int(differs)}'><td><b>{escape(clip_id)}</b>{refs}</td>"
            + "".join(cells)
            + "</tr>"
        )
    heads = "".join(
        f"<th>{escape(label)}<br><span class='dim'>{escape(m[1])}</span></th>"
        for label, m in zip(labels, matched, strict=True)
    )
    content = (
        "<p class='nav'><a href='index.html'>← run</a></p><h1>Runs side by side</h1>"
        "<p class='dim'>Green: a predicted event paired with a reference; red: a prediction "
        "with no reference (false alarm); yellow: a reference some run missed.</p>"
        "<form class='filters' onsubmit='return false'><label><input type='checkbox' "
        "id='only-differ'> only clips where the runs differ</label></form>"
        f"<div class='tablewrap'><table class='cmp' id='compare'><thead><tr><th>clip and "
        f"reference events</th>{heads}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )
    return page("gaze · runs side by side", content)
