"""The trust report as a page a user can open or share (self-contained HTML)."""

from __future__ import annotations

from html import escape
from typing import Any

from gaze.atomic import GENERATOR_MARK

STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em}"
    "table{border-collapse:collapse;margin:1em 0}td,th{padding:.3em .8em;border-bottom:1px solid"
    " #ddd;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".dim{color:#666}"
)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def _num(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def trust_page(report: dict[str, Any]) -> str:
    rows = []
    for kind, k in report["kinds"].items():
        low, high = k["ci95"]
        rows.append(
            f"<tr><td>{escape(kind)}</td><td class='dim'>{escape(k['type'])}</td>"
            f"<td class='n'>{k['found']}/{k['n']}</td><td class='n'>{_pct(k['rate'])}</td>"
            f"<td class='n'>{_pct(low)} – {_pct(high)}</td>"
            f"<td class='n'>{_num(k['span_iou'], '.2f')}</td></tr>"
        )
    semantic = "".join(
        f"<tr><td>{escape(kind)}</td><td class='dim'>{escape(s['dimension'])}</td>"
        f"<td class='n'>{s['found']}/{s['n']}</td><td class='n'>{_pct(s['rate'])}</td>"
        f"<td class='n'>{_num(s['score_shift'], '+.2f')} ({escape(s['score'])})</td></tr>"
        for kind, s in (report.get("semantic") or {}).items()
    )
    headline = "".join(f"<li>{escape(line)}</li>" for line in report["headline"])
    controls = report["controls"]
    by_type = ", ".join(f"{escape(t)} {n}" for t, n in sorted(controls["by_type"].items()))
    return (
        f"<!doctype html><html><head><meta charset='utf-8'>{GENERATOR_MARK}"
        f"<title>gaze trust report: {escape(report['method'])}</title><style>{STYLE}</style>"
        f"</head><body><h1>How far can {escape(report['method'])} be trusted on these clips?</h1>"
        f"<ul>{headline}</ul><h2>Injected failures</h2><p class='dim'>Found: a reported event "
        "of the injected type overlaps the injected span. Intervals: 95 % Wilson.</p>"
        "<table><tr><th>probe</th><th>type</th><th>found</th><th>rate</th><th>95 %</th>"
        f"<th>span IoU</th></tr>{''.join(rows)}</table>"
        f"<h2>Untouched clips</h2><p>{controls['with_events']} of {controls['n']} got an event"
        f" ({controls['events']} in all{': ' + by_type if by_type else ''}).</p>"
        + (
            "<h2>Semantic probes</h2><table><tr><th>probe</th><th>expected in</th><th>noticed"
            f"</th><th>rate</th><th>score shift</th></tr>{semantic}</table>"
            if semantic
            else ""
        )
        + "</body></html>\n"
    )
