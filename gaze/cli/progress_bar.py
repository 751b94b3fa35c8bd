"""A live progress line on stderr while the graph runs (stdout stays clean for --json)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Rich loads once the clip's first request is on its way
    from rich.console import Console
    from rich.status import Status


class GraphProgress:
    """Counts node updates into a one-line status: windows observed, specialists done, calls.
    The line is drawn from the run's first progress note on (``gaze.api.STARTED``, sent once
    the clip's first request has left): importing Rich and starting its refresh thread took
    0.03-0.05 s from that request on a 2-core machine (``bench/graph_latency.py``)."""

    def __init__(self, clip_name: str, console: Console | None = None) -> None:
        self.console = console
        """Where the line goes (None: standard error, made when the line is first drawn)."""
        self.clip_name = clip_name
        self.windows = 0
        self.observed = 0
        self.specialists = 0
        self.examined = 0
        self.calls = 0
        self.cached = 0
        self.stage = "decoding"
        self.status: Status | None = None

    def _text(self) -> str:
        parts = [f"{self.clip_name}: {self.stage}"]
        if self.windows:
            parts.append(f"observed {self.observed}/{self.windows} windows")
        if self.specialists:
            parts.append(f"specialists {self.examined}/{self.specialists}")
        parts.append(f"{self.calls} calls" + (f" ({self.cached} cached)" if self.cached else ""))
        return " · ".join(parts)

    def __call__(self, node: str, update: dict[str, Any]) -> None:
        for record in update.get("usage", []):
            self.calls += 1
            self.cached += bool(record.get("cache_hit"))
        if node == "load_clip":
            self.windows = len(update.get("windows", []))
            self.stage = "grounding"
        elif node == "progress_note" and "window_observed" in update:
            self.observed += 1  # streamed by the observe node as each window's call ends
            self.stage = "observing"
        elif node == "observe":
            self.observed = self.windows
            self.stage = "aligning"
        elif node == "route":
            self.specialists = sum(len(r["dimensions"]) for r in update.get("routes", []))
            self.stage = "examining"
        elif node == "specialist":
            self.examined += 1
        elif node == "critic":
            self.stage = "verifying"
        elif node == "report":
            self.stage = "done"
        if self.status is None:
            from rich.console import Console
            from rich.status import Status

            self.status = Status(self._text(), console=self.console or Console(stderr=True))
            self.status.start()
        else:
            self.status.update(self._text())

    def __enter__(self) -> GraphProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.stop()


class BatchProgress:
    """A progress bar with a count and ETA, and (``usage``) running call and token counts, for
    ``bench run`` and ``forge``."""

    def __init__(self, console: Console, total: int, method: str, usage: bool = True) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn(f"[bold]{method}[/bold]"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[cost]}"),
            console=console,
        )
        self.task = self.progress.add_task(method, total=total, cost="")
        self.calls = self.tokens = self.failed = 0
        self.usd = 0.0
        self.usage = usage

    def __call__(self, clip_id: str, report: Any, error: str | None) -> None:
        if report is not None:
            self.calls += sum(report.manifest.calls.values())
            self.tokens += report.manifest.input_tokens + report.manifest.output_tokens
            self.usd += report.manifest.cost_usd
        self.failed += error is not None
        cost = (
            f"{self.calls} calls · {self.tokens} tokens"
            + (f" · ${self.usd:.4f}" if self.usd else "")
            + (f" · [red]{self.failed} failed[/red]" if self.failed else "")
        )
        self.progress.update(self.task, advance=1, cost=cost if self.usage else "")

    def __enter__(self) -> BatchProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()
