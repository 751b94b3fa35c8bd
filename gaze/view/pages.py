"""The run viewer's index page: what the run was and cost, a leaderboard of every scores file,
and a table of clips that filters by generator, dimension, type, severity and flag."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from gaze.bench.score_cases import HEADLINE
from gaze.report.html import html_page, static
from gaze.report.templates import render
from gaze.schema.report import Report
from gaze.view.runs import RunData

TOTALS = (
    ("clips", "clips"),
    ("done", "done"),
    ("resumed", "resumed"),
    ("calls", "calls"),
    ("input_tokens", "input tokens"),
    ("estimated_input_tokens", "estimated input tokens"),
    ("cached_input_tokens", "cached input tokens"),
    ("output_tokens", "output tokens"),
    ("images", "images"),
    ("cost_usd", "cost (USD)"),
    ("wall_time_s", "wall time (s)"),
)


def page(title: str, body: str) -> str:
    """A viewer page: the report's styles and the viewer's, its script, nothing external."""
    styles = static("report.css") + static("view.css", "gaze.view")
    return html_page(title, body, styles, static("view.js", "gaze.view"))


def clip_page_name(clip_id: str) -> str:
    """File name of a clip's page: the id with anything unsafe in a file name %-escaped."""
    return quote(clip_id, safe="") + ".html"


def clip_href(folder: str, clip_id: str) -> str:
    return f"{folder}/{quote(clip_page_name(clip_id))}"


def clip_nav(ids: Sequence[str], position: int) -> str:
    """A clip page's way back to the run and on to the clips before and after it (also by the
    keyboard: ``[`` and ``]``, ``u`` for the run)."""

    def link(rel: str, offset: int, text: str) -> str:
        at = position + offset
        if not 0 <= at < len(ids):
            return f"<span class='dim'>{text}</span>"
        href = quote(clip_page_name(ids[at]))
        return f"<a id='{rel}' rel='{rel}' href='{href}' title='{escape(ids[at])}'>{text}</a>"

    return (
        "<p class='nav'><a id='up' href='../index.html'>← run</a>"
        f"{link('prev', -1, '‹ previous clip')}{link('next', 1, 'next clip ›')}"
        f"<span class='dim'>clip {position + 1} of {len(ids)}</span></p>"
    )


def _number(value: Any, places: int = 2) -> str:
    """A number for people: floats to ``places`` decimals, thousands separated."""
    if value is None:
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,.{places}f}" if isinstance(value, float) else f"{value:,}"


def _cells(result: dict[str, Any]) -> list[dict[str, Any]]:
    cells = []
    for key in HEADLINE:
        value = result.get(key)
        interval = (result.get("ci") or {}).get(key)
        cells.append(
            {
                "shown": "—" if value is None else f"{value:.3f}",
                "data": "" if value is None else f"{value:.6f}",
                "ci": (f"{interval[0]:.3f}", f"{interval[1]:.3f}")
                if interval and interval[0] is not None
                else None,
            }
        )
    return cells


def leaderboard_rows(runs: Sequence[RunData]) -> list[dict[str, Any]]:
    """One row per scores file of every run, then one per generator slice, each metric with
    its 95 % interval where the scores file has one."""
    rows: list[dict[str, Any]] = []
    for run in runs:
        for scores in run.scores:
            r = scores.result
            name = run.label + (f" · {scores.name}" if len(run.scores) > 1 else "")
            rows.append(
                {
                    "name": name,
                    "generator": "",
                    "judge": r.get("judge"),
                    "protocol": r.get("protocol"),
                    "n_clips": r.get("n_clips"),
                    "cells": _cells(r),
                }
            )
            for generator, sliced in ((r.get("slices") or {}).get("generator") or {}).items():
                rows.append(
                    {
                        "name": run.label,
                        "generator": generator,
                        "n_clips": sliced.get("n_clips"),
                        "cells": _cells(sliced),
                    }
                )
    return rows


def _joined(values: Iterable[str]) -> str:
    """A list attribute: values joined with "|" (they may hold spaces)."""
    return "|".join(sorted(set(values)))


def _score(score: float | None) -> str:
    return "" if score is None else f"{score:g}"


def clip_row(
    run: RunData, clip_id: str, report: Report | None, detail: dict[str, Any]
) -> dict[str, Any]:
    """What the clip table shows of one clip (and filters and sorts it by)."""
    row = run.rows.get(clip_id)
    generator = row.generator if row and row.generator else ""
    if report is None:
        why = str((run.info.get("failed") or {}).get(clip_id, "no report"))
        return {
            "clip_id": clip_id,
            "generator": generator,
            "dims": "",
            "types": "",
            "sev": "0",
            "flags": "failed",
            "text": clip_id.lower(),
            "failed": why,
        }
    events = report.events
    sev = max([e.severity for e in events], default=0)
    types = [e.type for e in events]
    duration = report.clip.duration_s if report.clip else None
    f1 = detail.get("f1")
    return {
        "clip_id": clip_id,
        "generator": generator,
        "dims": _joined(d for e in events for d in (e.dimensions or [e.dimension])),
        "types": _joined(types),
        "sev": f"{sev:g}",
        "flags": _joined(report.flags),
        "text": f"{clip_id} {report.instruction} {' '.join(types)}".lower(),
        "failed": None,
        "href": clip_href("clips", clip_id),
        "instruction": report.instruction[:120],
        "duration": _number(duration),
        "duration_v": duration or "",
        "n_events": len(events),
        "refs": len(row.events) if row else None,
        "type_list": types,
        "flag_text": ", ".join(report.flags),
        "pa": _score(report.pa.score if report.pa else None),
        "ia": _score(report.ia.score if report.ia else None),
        "f1_v": "" if f1 is None else f1,
        "scored": f"F1 {f1:.2f} · IoU {detail.get('miou', 0):.2f}" if f1 is not None else "",
    }


def index_html(
    runs: Sequence[RunData], compared: bool, plots: str = "", trust: bool = False
) -> str:
    """The run index (``plots``: the plots section's markup; ``trust``: a probe's trust page
    sits beside it)."""
    run = runs[0]
    info = run.info
    detail = run.scores_by_clip()
    failed = info.get("failed") or {}
    ids = list(run.reports) + [c for c in failed if c not in run.reports]
    reports = [run.reports.get(c) for c in ids]
    events = [e for r in reports if r for e in r.events]
    flags = [f for r in reports if r for f in r.flags] + (["failed"] if None in reports else [])
    body = render(
        "run_index.html.j2",
        run=run,
        info=info,
        manifest=str(run.manifest or info.get("manifest") or "unknown"),
        when=" → ".join(str(info[k]) for k in ("started_at", "finished_at") if info.get(k)),
        compared=compared,
        trust=trust,
        totals=[
            (_number(info.get(key), 4 if key == "cost_usd" else 2), label)
            for key, label in TOTALS
            if key in info
        ],
        failed={clip: str(why) for clip, why in failed.items()},
        models={role: str(spec) for role, spec in (info.get("models") or {}).items()},
        settings={str(k): str(v) for k, v in (info.get("settings") or {}).items()},
        headline=HEADLINE,
        leaders=leaderboard_rows(runs),
        plots=Markup(plots),
        filters=[
            (
                "generator",
                "generator",
                sorted({r.generator for r in run.rows.values() if r.generator}),
            ),
            ("dimension", "dimension", sorted({d for e in events for d in e.dimensions})),
            ("type", "type", sorted({e.type for e in events})),
        ],
        flag_values=sorted(set(flags)),
        clips=[clip_row(run, c, r, detail.get(c, {})) for c, r in zip(ids, reports, strict=True)],
    )
    return page(f"gaze run · {run.label}", body)
