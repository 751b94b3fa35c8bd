"""A run at a glance: precision and recall per failure type (from the scorer's own matches), and
every clip's events stacked on one time axis (references outlined beside them)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from html import escape
from typing import Any

from gaze.report.svg import FONT_PX, SEVERITY_COLOUR, TimeAxis, ticks
from gaze.report.terminal import severity_level
from gaze.view.pages import clip_href
from gaze.view.runs import RunData

BAR_W = 420
"""Longest bar (a rate of 1)."""
LABEL_W = 190
ROW = 14
CLIP_ROW = 18


@dataclass(frozen=True)
class TypeRates:
    """One failure type's share of predictions that were paired, and of references found."""

    type: str
    paired_predictions: int
    predictions: int
    found_references: int
    references: int

    @property
    def precision(self) -> float | None:
        return self.paired_predictions / self.predictions if self.predictions else None

    @property
    def recall(self) -> float | None:
        return self.found_references / self.references if self.references else None


def type_rates(run: RunData, matches: dict[str, dict[str, Any]]) -> list[TypeRates]:
    """Per type, from the scorer's pairs (``per_clip``: ``matched`` with ``pred`` and ``ref``
    indices into the report's and the manifest row's events): predicted events of the type that
    were paired, and reference events of the type that were found. Clips without matches (no
    scores, no manifest row) count for neither."""
    predicted: Counter[str] = Counter()
    paired: Counter[str] = Counter()
    referenced: Counter[str] = Counter()
    found: Counter[str] = Counter()
    for clip_id, detail in matches.items():
        report, row = run.reports.get(clip_id), run.rows.get(clip_id)
        if report is None or row is None:
            continue
        pairs = detail.get("matched", [])
        hit_preds = {m["pred"] for m in pairs}
        hit_refs = {m["ref"] for m in pairs}
        for i, event in enumerate(report.events):
            predicted[event.type] += 1
            paired[event.type] += i in hit_preds
        for j, ref in enumerate(row.events):
            referenced[ref.kind] += 1
            found[ref.kind] += j in hit_refs
    kinds = sorted(set(predicted) | set(referenced), key=lambda t: (-referenced[t], t))
    return [TypeRates(t, paired[t], predicted[t], found[t], referenced[t]) for t in kinds]


def _bar(x: float, y: float, rate: float | None, colour: str, text: str) -> str:
    if rate is None:
        return (
            f'<text x="{x + 2:.1f}" y="{y + ROW / 2 + 3:.1f}" font-size="{FONT_PX}" '
            f'fill="#9aa5b1">none</text>'
        )
    width = max(rate * BAR_W, 1.0)
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{ROW - 3}" fill="{colour}">'
        f"<title>{escape(text)}</title></rect>"
        f'<text x="{x + width + 4:.1f}" y="{y + ROW / 2 + 2:.1f}" font-size="{FONT_PX}" '
        f'fill="#3e4c59">{escape(text)}</text>'
    )


def type_bars_svg(rates: list[TypeRates]) -> str:
    """Horizontal bars: per type, precision (blue) over recall (orange), each with its counts."""
    if not rates:
        return "<p class='dim'>No events to rate: score the run first.</p>"
    top = 24
    height = top + len(rates) * 2 * ROW + 8
    width = LABEL_W + BAR_W + 140
    parts = [
        f'<text x="{LABEL_W}" y="12" font-size="{FONT_PX}" fill="#2680c2">■ precision '
        f'(predictions paired)</text><text x="{LABEL_W + 190}" y="12" font-size="{FONT_PX}" '
        f'fill="#e0a526">■ recall (references found)</text>'
    ]
    for i, r in enumerate(rates):
        y = top + i * 2 * ROW
        p, c = r.precision, r.recall
        parts.append(
            f'<g class="type-rate" data-type="{escape(r.type)}" '
            f'data-precision="{"" if p is None else f"{p:.4f}"}" '
            f'data-recall="{"" if c is None else f"{c:.4f}"}">'
            f'<text x="{LABEL_W - 6}" y="{y + ROW + 3}" font-size="{FONT_PX + 1}" '
            f'text-anchor="end">{escape(r.type)}</text>'
            + _bar(
                LABEL_W,
                y,
                p,
                "#2680c2",
                f"{p:.2f} ({r.paired_predictions}/{r.predictions})" if p is not None else "",
            )
            + _bar(
                LABEL_W,
                y + ROW,
                c,
                "#e0a526",
                f"{c:.2f} ({r.found_references}/{r.references})" if c is not None else "",
            )
            + "</g>"
        )
    return (
        f'<svg class="bars" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="precision and recall per failure type">{"".join(parts)}</svg>'
    )


def run_timelines_svg(run: RunData, folder: str = "clips") -> str:
    """Every clip of the run on one row, on a shared time axis: predicted events filled in
    their severity's colour, reference events outlined below them; a row links to its page."""
    clips = [(c, r) for c, r in run.reports.items()]
    if not clips:
        return ""
    longest = max(
        [r.clip.duration_s for _, r in clips if r.clip and r.clip.duration_s > 0]
        + [e.end_s for _, r in clips for e in r.events]
        + [1.0]
    )
    axis = TimeAxis(longest, x0=LABEL_W)
    top = 22
    height = top + len(clips) * CLIP_ROW + 6
    parts = ticks(axis, top, height - 4)
    for i, (clip_id, report) in enumerate(clips):
        y = top + i * CLIP_ROW
        length = report.clip.duration_s if report.clip and report.clip.duration_s > 0 else longest
        parts.append(
            f'<a href="{clip_href(folder, clip_id)}" class="clip-row" data-clip="'
            f'{escape(clip_id)}"><text x="{LABEL_W - 6}" y="{y + 12}" font-size="{FONT_PX}" '
            f'text-anchor="end">{escape(clip_id[-30:])}</text>'
            f'<rect x="{axis.x0}" y="{y + 2}" width="{axis.x(length) - axis.x0:.1f}" '
            f'height="{CLIP_ROW - 4}" fill="#f5f7fa"/>'
        )
        for event in report.events:
            x0, x1 = axis.x(event.start_s), axis.x(event.end_s)
            colour = SEVERITY_COLOUR[severity_level(event.severity)]
            parts.append(
                f'<rect class="pred" x="{x0:.1f}" y="{y + 2}" width="{max(x1 - x0, 2):.1f}" '
                f'height="{CLIP_ROW / 2 - 2:.1f}" fill="{colour}"><title>{escape(event.type)} '
                f"{event.start_s:.2f}-{event.end_s:.2f} s</title></rect>"
            )
        row = run.rows.get(clip_id)
        for ref in row.events if row is not None else []:
            x0, x1 = axis.x(ref.start_s), axis.x(ref.end_s)
            parts.append(
                f'<rect class="ref" x="{x0:.1f}" y="{y + CLIP_ROW / 2 + 1:.1f}" '
                f'width="{max(x1 - x0, 2):.1f}" height="{CLIP_ROW / 2 - 3:.1f}" fill="none" '
                f'stroke="#1f2933"><title>reference: {escape(ref.kind)} {ref.start_s:.2f}-'
                f"{ref.end_s:.2f} s</title></rect>"
            )
        parts.append("</a>")
    return (
        f'<svg class="runline" viewBox="0 0 {axis.x1 + 16:.0f} {height}" role="img" '
        f'aria-label="every clip\'s events on one time axis">{"".join(parts)}</svg>'
    )


def plots_html(run: RunData, matches: dict[str, dict[str, Any]], source: str) -> str:
    """The index's plots section."""
    rates = type_bars_svg(type_rates(run, matches)) if matches else f"<p class='dim'>{source}</p>"
    return (
        f"<h2>Per type</h2><p class='dim'>{escape(source)}</p><div class='chart'>{rates}</div>"
        "<h2>Every clip's events</h2><p class='dim'>Filled: the run's events, in their "
        "severity's colour; outlined: the reference events. Click a row for its page.</p>"
        f"<div class='chart'>{run_timelines_svg(run)}</div>"
    )
