"""A self-contained HTML report (no scripts, no external files): header, a timeline of events,
the events table, judge scores with the progress curve, cross-checks and the run manifest."""

from __future__ import annotations

from html import escape

from gaze.report.terminal import severity_level
from gaze.schema.report import Report

SEVERITY_COLOUR = {1: "#9aa5b1", 2: "#4aa3df", 3: "#e0a526", 4: "#e5533d", 5: "#9b1c1c"}
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:980px;color:#1f2933}
h1{font-size:1.3rem;margin:0}.dim{color:#616e7c}table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #e4e7eb;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f5f7fa}.sev{color:#fff;border-radius:3px;padding:0 .4rem;font-weight:600}
.note{background:#fffbea;border-left:3px solid #f0b429;padding:.3rem .6rem;margin:.3rem 0}
.problem{background:#ffeeee;border-left:3px solid #e12d39;padding:.3rem .6rem;margin:.3rem 0}
svg{width:100%;height:auto}code{font-size:12px}
"""


def timeline(report: Report, width: int = 900, row: int = 16) -> str:
    duration = (
        report.clip.duration_s
        if report.clip and report.clip.duration_s > 0
        else max([e.end_s for e in report.events] + [1.0])
    )
    events = sorted(report.events, key=lambda e: e.start_s)
    height = 30 + row * max(1, len(events))
    parts = [
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="event timeline">',
        f'<line x1="0" y1="20" x2="{width}" y2="20" stroke="#9aa5b1"/>',
    ]
    for second in range(int(duration) + 1):
        x = width * second / duration
        parts.append(f'<text x="{x:.1f}" y="12" font-size="9" fill="#616e7c">{second}s</text>')
    for i, ev in enumerate(events):
        x0 = width * ev.start_s / duration
        x1 = max(x0 + 3, width * ev.end_s / duration)
        y = 26 + i * row
        colour = SEVERITY_COLOUR[severity_level(ev.severity)]
        parts.append(
            f'<rect x="{x0:.1f}" y="{y}" width="{x1 - x0:.1f}" height="{row - 4}" '
            f'fill="{colour}"><title>{escape(ev.type)} {ev.start_s:.2f}-'
            f"{ev.end_s:.2f} s</title></rect>"
        )
        parts.append(
            f'<text x="{min(x1 + 4, width - 150):.1f}" y="{y + row - 6}" '
            f'font-size="10">{escape(ev.type)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def progress_svg(report: Report, width: int = 900, height: int = 160) -> str:
    curve = report.progress
    if curve is None or len(curve.processed) < 1:
        return ""
    n = max(len(curve.processed) - 1, 1)
    points = " ".join(
        f"{width * i / n:.1f},{height - height * v:.1f}" for i, v in enumerate(curve.processed)
    )
    return (
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-label="progress curve">'
        f'<rect width="{width}" height="{height}" fill="#f5f7fa"/>'
        f'<polyline points="{points}" fill="none" stroke="#2680c2" stroke-width="2"/></svg>'
    )


def render_html(report: Report) -> str:
    info = report.clip
    meta = (
        ""
        if info is None
        else (
            f"{info.duration_s:.2f} s · {info.fps:g} fps · "
            f"{info.frame_count} frames · {info.width}x{info.height}"
        )
    )
    rows = []
    for ev in sorted(report.events, key=lambda e: (e.start_s, e.end_s)):
        level = severity_level(ev.severity)
        evidence = "".join(f"<li>{escape(item)}</li>" for item in ev.evidence)
        conf = "" if ev.confidence is None else f"{ev.confidence:.2f}"
        rows.append(
            f"<tr><td>{ev.start_s:.2f}-{ev.end_s:.2f}</td><td>{escape(ev.dimension)}<br>"
            f"<b>{escape(ev.type)}</b></td><td><span class='sev' style='background:"
            f"{SEVERITY_COLOUR[level]}'>{ev.severity:g}</span></td><td>{conf}</td>"
            f"<td>{escape(ev.description)}<ul class='dim'>{evidence}</ul></td></tr>"
        )
    events = (
        (
            "<table><tr><th>when (s)</th><th>dimension / type</th><th>sev</th><th>conf</th>"
            "<th>what and why</th></tr>" + "".join(rows) + "</table>"
        )
        if rows
        else "<p>No failure events found in the sampled frames.</p>"
    )
    scores = []
    for name, score in (
        ("Physical adherence (PA)", report.pa),
        ("Instruction alignment (IA)", report.ia),
    ):
        if score is not None:
            subs = ", ".join(f"{escape(k)} {v}" for k, v in score.subscores.items())
            scores.append(
                f"<p><b>{name}: {score.score}/5</b> <span class='dim'>{subs}</span>"
                f"<br>{escape(score.rationale)}</p>"
            )
    if report.progress is not None:
        metrics = ", ".join(
            f"{k} {v:.2f}" for k, v in report.progress.metrics.items() if v is not None
        )
        scores.append(
            f"<p><b>Task progress</b> <span class='dim'>{escape(metrics)}</span></p>"
            + progress_svg(report)
        )
    notes = "".join(f"<div class='note'>{escape(n)}</div>" for n in report.consistency)
    problems = "".join(f"<div class='problem'>{escape(p)}</div>" for p in report.problems)
    m = report.manifest
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>gaze · {escape(report.clip_id)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(report.clip_id)}</h1><p>{escape(report.instruction)}<br>"
        f"<span class='dim'>{escape(meta)}</span></p>"
        f"<h2>Timeline</h2>{timeline(report)}<h2>Events</h2>{events}"
        + ("<h2>Judges</h2>" + "".join(scores) if scores else "")
        + f"{notes}{problems}<p class='dim'><i>{escape(report.assessment.note)}</i></p>"
        f"<p class='dim'>flags: {escape(', '.join(report.flags) or 'none')} · gaze "
        f"{escape(m.gaze_version)} · codebook {escape(m.codebook_version)} "
        f"<code>{escape(m.codebook_hash)}</code> · {m.wall_time_s:.2f} s</p></body></html>\n"
    )
