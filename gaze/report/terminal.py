"""A readable terminal rendering of a report (rich): header, events by time, coverage, warnings."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gaze.schema.report import Report

SEVERITY_STYLE = {1: "dim", 2: "cyan", 3: "yellow", 4: "bold red", 5: "bold white on red"}


PROBLEMS_LISTED = 5
"""Up to this many problems are printed one a line; more are counted by kind (a 60 s clip's
model run printed 21 'lies outside its segment' lines), and all stay in the JSON report."""


def _kind(problem: str) -> str:
    """What went wrong, without where and which: the last clause, numbers in brackets dropped."""
    reason = problem.rsplit(": ", 1)[-1]
    words = " ".join(re.sub(r"\([^)]*\)", "", reason).split())
    return words.replace(" ;", ";").replace("; ", ", ")


def problem_lines(problems: Sequence[str]) -> list[str]:
    """The report's problems as the terminal shows them: each, or a count per kind."""
    if len(problems) <= PROBLEMS_LISTED:
        return list(problems)
    kinds = Counter(_kind(p) for p in problems)
    counted = "; ".join(f"{n} x {kind}" for kind, n in kinds.most_common())
    return [f"{len(problems)} problems ({counted}); each is listed in the JSON report"]


def severity_level(severity: float) -> int:
    """The rubric level a (possibly averaged) severity is shown as, 1-5."""
    return min(5, max(1, round(severity)))


def severity_text(severity: float) -> Text:
    level = severity_level(severity)
    shown = f"{severity:g}"
    return Text(shown, style=SEVERITY_STYLE[level])


def events_table(report: Report) -> Table:
    table = Table(title="Failure events", title_justify="left", expand=True, show_lines=False)
    table.add_column("when (s)", no_wrap=True)
    table.add_column("dimension / type")
    table.add_column("sev", justify="center")
    table.add_column("conf", justify="right")
    table.add_column("what and why", ratio=1)
    for ev in sorted(report.events, key=lambda e: (e.start_s, e.end_s)):
        span = f"{ev.start_s:.2f}-{ev.end_s:.2f}"
        what = Text(ev.description)
        for item in ev.evidence:
            what.append(f"\n  · {item}", style="dim")
        conf = "" if ev.confidence is None else f"{ev.confidence:.2f}"
        table.add_row(
            span, f"{ev.dimension}\n[bold]{ev.type}[/bold]", severity_text(ev.severity), conf, what
        )
    return table


WIDE = 100
"""From this many columns the events are a table; narrower terminals get one block per event,
which never cuts a word or a span."""


def events_blocks(report: Report) -> Group:
    """Events for a narrow terminal: a heading line per event, then its text indented."""
    blocks: list[RenderableType] = [Text("Failure events", style="italic")]
    for ev in sorted(report.events, key=lambda e: (e.start_s, e.end_s)):
        block = Text()
        block.append(f"{ev.start_s:.2f}-{ev.end_s:.2f} s  ", style="bold")
        block.append(ev.type, style="bold")
        block.append("  sev ")
        block.append_text(severity_text(ev.severity))
        if ev.confidence is not None:
            block.append(f"  conf {ev.confidence:.2f}")
        block.append(f"  ({ev.dimension})", style="dim")
        blocks.append(block)
        blocks.append(Padding(Text(ev.description), (0, 0, 0, 2)))
        for item in ev.evidence:
            blocks.append(Padding(Text(f"· {item}", style="dim"), (0, 0, 0, 4)))
    return Group(*blocks)


def terminal_width(default: int = WIDE) -> int:
    """Columns of the terminal the report reaches: $COLUMNS, else stdout's or stderr's terminal
    (so ``gaze diagnose ... | less`` still fits the screen), else ``default``."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    for fd in (1, 2):
        try:
            return os.get_terminal_size(fd).columns
        except OSError:
            continue
    return default


def report_console() -> Console:
    return Console(width=terminal_width())


def judge_lines(report: Report) -> list[Text]:
    """PA/IA scores and the progress curve's headline metrics, when those judges ran."""
    lines = []
    for name, score in (
        ("physical adherence (PA)", report.pa),
        ("instruction alignment (IA)", report.ia),
    ):
        if score is not None:
            subs = ", ".join(f"{k} {v}" for k, v in score.subscores.items())
            lines.append(
                Text(f"{name}: {score.score}/5" + (f"  ({subs})" if subs else ""), style="bold")
            )
    if report.progress is not None:
        m = report.progress.metrics
        shown = ", ".join(
            f"{k} {m[k]:.2f}" for k in ("MP", "SR", "PPL", "CRA", "DRR") if m.get(k) is not None
        )
        lines.append(Text(f"task progress: {shown}", style="bold"))
    return lines


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(value: Any) -> Any:
    """``value`` with every control character (escape sequences, bells, C1 codes) shown as
    ``\\xNN`` instead of reaching the terminal: instructions and model text are untrusted."""
    if isinstance(value, str):
        return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", value)
    if isinstance(value, list):
        return [printable(v) for v in value]
    if isinstance(value, dict):
        return {k: printable(v) for k, v in value.items()}
    return value


def render(report: Report, console: Console) -> None:
    """Print ``report`` for a person; untrusted text is made printable first."""
    report = Report.model_validate(printable(report.model_dump(mode="json")))
    info = report.clip
    header = Text()
    header.append(f"{report.clip_id}\n", style="bold")
    header.append(f"instruction: {report.instruction}\n")
    if info is not None:
        header.append(
            f"{info.duration_s:.2f} s · {info.fps:g} fps · {info.frame_count} frames · "
            f"{info.width}x{info.height}",
            style="dim",
        )
    console.print(Panel(header, title="gaze diagnosis", title_align="left"))
    if report.events:
        console.print(events_table(report) if console.width >= WIDE else events_blocks(report))
    else:
        console.print(Text("No failure events found in the sampled frames.", style="green"))
    scores = judge_lines(report)
    if scores:
        console.print(Group(*scores))
    notes = [Text(report.assessment.note, style="italic")]
    for note in report.consistency:
        notes.append(Text(f"cross-check: {note}", style="magenta"))
    if report.rejected:
        notes.append(
            Text(
                f"{len(report.rejected)} hypothesis(es) rejected by the critic "
                "(listed in the JSON report)",
                style="dim",
            )
        )
    notes.extend(Text(f"problem: {line}", style="red") for line in problem_lines(report.problems))
    for warning in info.warnings if info else []:
        notes.append(Text(f"warning: {warning}", style="yellow"))
    if report.flags:
        notes.append(Text(f"flags: {', '.join(report.flags)}", style="dim"))
    m = report.manifest
    if m.served_images is not None:
        windows, frames = (
            m.settings.get("max_segment_windows"),
            m.settings.get("max_frames_per_call"),
        )
        notes.append(
            Text(
                f"note: the server takes at most {m.served_images} images per request, so "
                f"segments were {windows} windows ({frames} frames): every frame seen, in "
                "more calls",
                style="yellow",
            )
        )
    notes.append(
        Text(
            f"gaze {m.gaze_version} · codebook {m.codebook_version} ({m.codebook_hash[:15]}…) · "
            f"{m.wall_time_s:.2f} s",
            style="dim",
        )
    )
    console.print(Group(*notes))
