"""The run viewer's index page: what the run was and cost, a leaderboard of every scores file,
and a table of clips that filters by generator, dimension, type, severity and flag."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from gaze.bench.score_cases import HEADLINE
from gaze.report.html import html_page, static
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


def _number(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def totals_html(run: RunData) -> str:
    info = run.info
    if not info:
        return "<p class='note'>run.json is missing: the run never finished writing it.</p>"
    cells = "".join(
        f"<span><b>{escape(_number(info.get(key)))}</b> {label}</span>"
        for key, label in TOTALS
        if key in info
    )
    failed = info.get("failed") or {}
    failures = "".join(
        f"<div class='problem'>{escape(clip)}: {escape(str(why))}</div>"
        for clip, why in failed.items()
    )
    models = info.get("models") or {}
    model_rows = "".join(
        f"<tr><th>{escape(role)}</th><td>{escape(str(spec))}</td></tr>"
        for role, spec in models.items()
    )
    settings = "".join(
        f"<tr><th>{escape(str(k))}</th><td><code>{escape(str(v))}</code></td></tr>"
        for k, v in (info.get("settings") or {}).items()
    )
    return (
        f"<p class='stats'>{cells}<span><b>{len(failed)}</b> failed</span></p>{failures}"
        + (f"<h3>Models</h3><table>{model_rows}</table>" if model_rows else "")
        + f"<details><summary>Settings</summary><table>{settings}</table></details>"
    )


def _metric_cells(result: dict[str, Any]) -> str:
    cells = []
    for key in HEADLINE:
        value = result.get(key)
        interval = (result.get("ci") or {}).get(key)
        shown = "—" if value is None else f"{value:.3f}"
        ci = (
            f"<br><span class='dim'>[{interval[0]:.3f}, {interval[1]:.3f}]</span>"
            if interval and interval[0] is not None
            else ""
        )
        data = "" if value is None else f"{value:.6f}"
        cells.append(f"<td class='num' data-v='{data}'>{shown}{ci}</td>")
    return "".join(cells)


def leaderboard_html(runs: Sequence[RunData]) -> str:
    """One row per scores file of every run, then one per generator slice, each metric with its
    95 % interval where the scores file has one."""
    rows = []
    for run in runs:
        for scores in run.scores:
            r = scores.result
            name = run.label + (f" · {scores.name}" if len(run.scores) > 1 else "")
            rows.append(
                f"<tr><td data-v=''><b>{escape(name)}</b><br><span class='dim'>judge "
                f"{escape(str(r.get('judge')))}, {escape(str(r.get('protocol')))} protocol, "
                f"{r.get('n_clips')} clips</span></td>{_metric_cells(r)}</tr>"
            )
            for generator, sliced in ((r.get("slices") or {}).get("generator") or {}).items():
                rows.append(
                    f"<tr><td data-v=''>{escape(run.label)} · <i>{escape(generator)}</i><br>"
                    f"<span class='dim'>{sliced.get('n_clips')} clips</span></td>"
                    f"{_metric_cells(sliced)}</tr>"
                )
    if not rows:
        return (
            "<p class='dim'>No scores yet: run <code>gaze bench score MANIFEST RUNDIR/reports "
            "--out RUNDIR/scores.json</code> and view again.</p>"
        )
    head = "".join(f"<th data-sort>{escape(k)}</th>" for k in HEADLINE)
    return (
        "<p class='dim'>Click a column to sort. Intervals are 95 % bootstrap intervals over "
        f"condition groups.</p><div class='tablewrap'><table id='leaderboard'><thead><tr>"
        f"<th>method / generator</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</div>"
    )


def _options(name: str, label: str, values: Iterable[str]) -> str:
    options = "".join(f"<option>{escape(v)}</option>" for v in sorted(set(values)))
    return (
        f"<label>{label} <select name='{name}'><option value=''>all</option>{options}</select>"
        "</label>"
    )


def _joined(values: Iterable[str]) -> str:
    return escape("|".join(sorted(set(values))))


def clip_row(run: RunData, clip_id: str, report: Report | None, detail: dict[str, Any]) -> str:
    row = run.rows.get(clip_id)
    generator = row.generator if row and row.generator else ""
    refs = len(row.events) if row else None
    if report is None:
        why = str((run.info.get("failed") or {}).get(clip_id, "no report"))
        return (
            f"<tr data-generator='{escape(generator)}' data-dims='' data-types='' data-sev='0' "
            f"data-flags='failed' data-text='{escape(clip_id.lower())}'><td>{escape(clip_id)}"
            f"</td><td>{escape(generator)}</td><td></td><td></td><td class='problem' "
            f"colspan='4'>failed: {escape(why)}</td><td></td></tr>"
        )
    events = report.events
    sev = max([e.severity for e in events], default=0)
    types = [e.type for e in events]
    dims = [d for e in events for d in (e.dimensions or [e.dimension])]
    flags = list(report.flags)
    duration = report.clip.duration_s if report.clip else None
    judges = " ".join(
        f"{name} {s.score}" for name, s in (("PA", report.pa), ("IA", report.ia)) if s
    )
    f1 = detail.get("f1")
    scored = f"F1 {f1:.2f} · IoU {detail.get('miou', 0):.2f}" if f1 is not None else ""
    text = f"{clip_id} {report.instruction} {' '.join(types)}".lower()
    chips = "".join(f"<span class='chip'>{escape(t)}</span>" for t in types)
    return (
        f"<tr data-generator='{escape(generator)}' data-dims='{_joined(dims)}' "
        f"data-types='{_joined(types)}' data-sev='{sev:g}' data-flags='{_joined(flags)}' "
        f"data-text='{escape(text)}'><td data-v=''><a href='{clip_href('clips', clip_id)}'>"
        f"{escape(clip_id)}</a><br><span class='dim'>{escape(report.instruction[:120])}</span>"
        f"</td><td>{escape(generator)}</td>"
        f"<td class='num' data-v='{duration or ''}'>{_number(duration)}</td>"
        f"<td class='num' data-v='{len(events)}'>{len(events)}"
        + (f" <span class='dim'>/ {refs} ref</span>" if refs is not None else "")
        + f"</td><td>{chips}</td><td class='num' data-v='{sev:g}'>{sev:g}</td>"
        f"<td>{escape(', '.join(flags))}</td><td>{escape(judges)}</td>"
        f"<td class='num' data-v='{'' if f1 is None else f1}'>{scored}</td></tr>"
    )


def clips_html(run: RunData) -> str:
    detail = run.scores_by_clip()
    ids = list(run.reports) + [c for c in (run.info.get("failed") or {}) if c not in run.reports]
    reports = [run.reports.get(c) for c in ids]
    events = [e for r in reports if r for e in r.events]
    generators = [r.generator for r in run.rows.values() if r.generator]
    flags = [f for r in reports if r for f in r.flags] + (["failed"] if None in reports else [])
    filters = (
        "<form id='filters' class='filters' onsubmit='return false'>"
        + _options("generator", "generator", generators)
        + _options("dimension", "dimension", [d for e in events for d in e.dimensions])
        + _options("type", "type", [e.type for e in events])
        + "<label>severity at least <select name='severity'><option value=''>any</option>"
        + "".join(f"<option>{level}</option>" for level in range(1, 6))
        + "</select></label>"
        + _options("flag", "flag", flags)
        + "<label>text <input name='text' type='search'></label>"
        + "<span id='shown' class='dim'></span></form>"
    )
    body = "".join(
        clip_row(run, c, r, detail.get(c, {})) for c, r in zip(ids, reports, strict=True)
    )
    return (
        f"{filters}<div class='tablewrap'><table id='clips'><thead><tr>"
        "<th data-sort>clip</th><th data-sort>generator</th><th data-sort>duration (s)</th>"
        "<th data-sort>events</th><th>types</th><th data-sort>max sev</th><th>flags</th>"
        f"<th>judges</th><th data-sort>scored</th></tr></thead><tbody>{body}</tbody></table></div>"
    )


def index_html(runs: Sequence[RunData], compared: bool) -> str:
    run = runs[0]
    info = run.info
    when = " → ".join(str(info[k]) for k in ("started_at", "finished_at") if info.get(k))
    problems = "".join(f"<div class='note'>{escape(p)}</div>" for p in run.problems)
    nav = (
        "<p class='nav'>"
        + ("<a href='compare.html'>compare runs side by side</a>" if compared else "")
        + "</p>"
    )
    body = (
        f"<h1>Run: {escape(run.label)}</h1><p class='dim'>{escape(str(run.folder))} · "
        f"manifest {escape(str(run.manifest or info.get('manifest') or 'unknown'))}<br>"
        f"gaze {escape(str(info.get('gaze_version', '?')))} · git "
        f"<code>{escape(str(info.get('git') or '?'))}</code> · {escape(when)}</p>{nav}{problems}"
        f"<h2>Run</h2>{totals_html(run)}<h2>Leaderboard</h2>{leaderboard_html(runs)}"
        f"<h2>Clips</h2>{clips_html(run)}"
    )
    return page(f"gaze run · {run.label}", body)
