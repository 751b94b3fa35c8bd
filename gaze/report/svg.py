"""SVG charts of a report on one shared time axis: the event timeline (a lane per dimension,
labels that never overlap) and the progress curve (0-100 %, raw and processed, drawdowns).

Both charts use the same ``TimeAxis``, so a cursor at time t sits at the same x in each; the page's
script reads ``data-x0``, ``data-x1`` and ``data-duration`` from every ``svg.axis`` to move it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from gaze.report.terminal import severity_level
from gaze.schema.events import Event, ScoringEvent

SEVERITY_COLOUR = {1: "#9aa5b1", 2: "#4aa3df", 3: "#e0a526", 4: "#e5533d", 5: "#9b1c1c"}
UNGRADED_COLOUR = "#52606d"
"""A reference a peer gave no severity (GLiDE's bugs)."""
WIDTH = 960
LANE_LABEL_W = 150
"""Room on the left for lane names and the progress chart's percentage axis."""
RIGHT_PAD = 16
FONT_PX = 10
CHAR_W = 6.2
"""Upper bound of a 10 px sans-serif character's advance; labels are packed with it."""
ROW_H = 16
NICE_STEPS_S = (0.1, 0.2, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600)


@dataclass(frozen=True)
class TimeAxis:
    """Seconds -> x in a chart ``WIDTH`` wide, with the plot between ``x0`` and ``x1``."""

    duration_s: float
    x0: float = LANE_LABEL_W
    x1: float = WIDTH - RIGHT_PAD

    def x(self, t: float) -> float:
        return self.x0 + (self.x1 - self.x0) * min(max(t, 0.0), self.duration_s) / self.duration_s

    def attrs(self) -> str:
        return (
            f'class="axis" data-x0="{self.x0:g}" data-x1="{self.x1:g}" '
            f'data-duration="{self.duration_s:g}"'
        )


def tick_step(duration_s: float, most: int = 10) -> float:
    """The smallest step from ``NICE_STEPS_S`` that gives at most ``most`` intervals."""
    for step in NICE_STEPS_S:
        if duration_s / step <= most:
            return step
    return math.ceil(duration_s / most / 3600) * 3600


def tick_label(t: float, step: float) -> str:
    if step >= 60 or t >= 60:
        minutes, seconds = divmod(t, 60)
        return f"{int(minutes)}:{seconds:04.1f}" if step < 1 else f"{int(minutes)}:{seconds:02.0f}"
    return f"{t:g} s" if step >= 1 else f"{t:.{len(str(step).split('.')[1])}f} s"


def ticks(axis: TimeAxis, top: float, bottom: float) -> list[str]:
    """Tick lines and labels along the top of a chart."""
    step = tick_step(axis.duration_s)
    parts = []
    count = int(math.floor(axis.duration_s / step + 1e-9))
    for i in range(count + 1):
        t = i * step
        x = axis.x(t)
        anchor = "end" if x > axis.x1 - 20 else "start" if i == 0 else "middle"
        parts.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#e4e7eb"/>'
            f'<text x="{x:.1f}" y="{top - 4}" font-size="{FONT_PX}" fill="#616e7c" '
            f'text-anchor="{anchor}">{tick_label(t, step)}</text>'
        )
    return parts


def label_width(text: str) -> float:
    return len(text) * CHAR_W + 4


@dataclass(frozen=True)
class Placed:
    """An event's bar and label in the timeline, in chart pixels."""

    event_index: int
    row: int
    bar: tuple[float, float]
    label_x: float
    anchor: str  # "start" (label right of the bar) or "end" (left of it)
    text: str

    @property
    def extent(self) -> tuple[float, float]:
        width = label_width(self.text)
        lo, hi = self.bar
        if self.anchor == "start":
            return lo, max(hi, self.label_x + width)
        return min(lo, self.label_x - width), hi


def pack_lane(events: Sequence[tuple[int, ScoringEvent]], axis: TimeAxis) -> list[Placed]:
    """Rows for one lane's events so that no two bars or labels overlap: each event takes the
    first row whose last extent ends before its own begins (labels go left of a bar near the
    chart's right edge)."""
    row_ends: list[float] = []
    placed = []
    for index, ev in sorted(events, key=lambda item: (item[1].start_s, item[1].end_s)):
        lo = axis.x(ev.start_s)
        hi = max(lo + 3, axis.x(ev.end_s))
        text = ev.kind
        if hi + 4 + label_width(text) <= axis.x1 + RIGHT_PAD:
            candidate = Placed(index, 0, (lo, hi), hi + 4, "start", text)
        else:
            candidate = Placed(index, 0, (lo, hi), lo - 4, "end", text)
        start, end = candidate.extent
        row = next((r for r, last in enumerate(row_ends) if last + 6 <= start), len(row_ends))
        if row == len(row_ends):
            row_ends.append(end)
        else:
            row_ends[row] = end
        placed.append(Placed(index, row, candidate.bar, candidate.label_x, candidate.anchor, text))
    return placed


def timeline_svg(
    events: Sequence[Event],
    dimensions: Sequence[str],
    axis: TimeAxis,
    references: Sequence[ScoringEvent] = (),
) -> str:
    """One lane per dimension (those given, then any other an event names), and a last lane of
    reference events when there are any (outlined bars); an event's bar and label carry
    ``data-event`` (its index in ``events``) and ``data-t`` for seeking."""
    names = list(dimensions) + sorted({e.dimension for e in events} - set(dimensions))
    lanes: list[tuple[str, list[tuple[int, ScoringEvent]], bool]] = [
        (
            name.replace("_", " "),
            [(i, e) for i, e in enumerate(events) if e.dimension == name],
            False,
        )
        for name in names
    ]
    if references:
        lanes.append(("reference (annotated)", list(enumerate(references)), True))
    top = 20
    body: list[str] = []
    y = top + 4
    for lane, members, is_reference in lanes:
        placed = pack_lane(members, axis)
        by_index = dict(members)
        rows = max([p.row for p in placed] + [0]) + 1
        height = rows * ROW_H + 4
        body.append(
            f'<rect x="0" y="{y}" width="{WIDTH}" height="{height}" fill="#f8f9fb"/>'
            f'<text x="4" y="{y + 12}" font-size="{FONT_PX}" fill="#3e4c59">{escape(lane)}</text>'
        )
        for p in placed:
            ev = by_index[p.event_index]
            colour = (
                UNGRADED_COLOUR
                if ev.severity is None
                else SEVERITY_COLOUR[severity_level(ev.severity)]
            )
            by = y + 2 + p.row * ROW_H
            lo, hi = p.bar
            paint = (
                f'fill="#fff" stroke="{colour}" stroke-width="2"'
                if is_reference
                else f'fill="{colour}"'
            )
            which = "ref" if is_reference else "event"
            body.append(
                f'<g class="ev" data-{which}="{p.event_index}" data-t="{ev.start_s:g}">'
                f'<rect x="{lo:.1f}" y="{by}" width="{hi - lo:.1f}" height="{ROW_H - 4}" {paint}>'
                f"<title>{escape(ev.kind)} {ev.start_s:.2f}-{ev.end_s:.2f} s, "
                f"severity {ev.severity_shown}</title></rect>"
                f'<text x="{p.label_x:.1f}" y="{by + ROW_H - 6}" font-size="{FONT_PX}" '
                f'text-anchor="{p.anchor}">{escape(p.text)}</text></g>'
            )
        y += height + 2
    height = y + 2
    return (
        f'<svg {axis.attrs()} viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="event timeline">'
        + "".join(ticks(axis, top, height))
        + "".join(body)
        + cursor(height)
        + "</svg>"
    )


def cursor(height: float) -> str:
    return (
        f'<line class="cursor" x1="-10" y1="0" x2="-10" y2="{height}" stroke="#1f2933" '
        'stroke-width="1.5"/>'
    )


def progress_svg(
    times_s: Sequence[float],
    raw: Sequence[float],
    processed: Sequence[float],
    drawdowns: Sequence[tuple[int, int]],
    axis: TimeAxis,
    height: int = 190,
) -> str:
    """Progress in percent against time: processed curve (line), raw values (dots), drawdown
    spans shaded (index pairs into ``times_s``)."""
    top, bottom = 20, height - 8

    def y(v: float) -> float:
        return bottom - (bottom - top) * min(max(v, 0.0), 1.0)

    parts = [
        f'<rect x="{axis.x0}" y="{top}" width="{axis.x1 - axis.x0}" height="{bottom - top}" '
        'fill="#f8f9fb"/>'
    ]
    parts += ticks(axis, top, bottom)
    for level in (0, 25, 50, 75, 100):
        yy = y(level / 100)
        parts.append(
            f'<line x1="{axis.x0}" y1="{yy:.1f}" x2="{axis.x1}" y2="{yy:.1f}" stroke="#d9dee4"/>'
            f'<text x="{axis.x0 - 6}" y="{yy + 3:.1f}" font-size="{FONT_PX}" fill="#616e7c" '
            f'text-anchor="end">{level} %</text>'
        )
    for i0, i1 in drawdowns:
        lo, hi = axis.x(times_s[i0]), axis.x(times_s[i1])
        parts.append(
            f'<rect class="drawdown" x="{lo:.1f}" y="{top}" width="{max(hi - lo, 2):.1f}" '
            f'height="{bottom - top}" fill="#e5533d" fill-opacity="0.15">'
            f"<title>drawdown {times_s[i0]:.2f}-{times_s[i1]:.2f} s</title></rect>"
        )
    line = " ".join(f"{axis.x(t):.1f},{y(v):.1f}" for t, v in zip(times_s, processed, strict=False))
    parts.append(f'<polyline points="{line}" fill="none" stroke="#2680c2" stroke-width="2"/>')
    for t, v in zip(times_s, raw, strict=False):
        parts.append(f'<circle cx="{axis.x(t):.1f}" cy="{y(v):.1f}" r="2.2" fill="#9aa5b1"/>')
    parts.append(
        f'<text x="4" y="{top + 10}" font-size="{FONT_PX}" fill="#2680c2">— processed</text>'
        f'<text x="4" y="{top + 24}" font-size="{FONT_PX}" fill="#9aa5b1">● raw</text>'
    )
    return (
        f'<svg {axis.attrs()} viewBox="0 0 {WIDTH} {height}" role="img" '
        f'aria-label="task progress curve">' + "".join(parts) + cursor(height) + "</svg>"
    )
