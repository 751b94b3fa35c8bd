"""`gaze clip info CLIP`: metadata (as decoded) and the window schedule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from gaze.cli.options import print_json
from gaze.settings.context import default_of
from gaze.video.clip import open_clip
from gaze.video.windows import SamplingSettings


@click.group()
def clip() -> None:
    """Inspect clips."""


@clip.command()
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--window-s",
    type=float,
    default=default_of("window_s"),
    show_default=True,
    help="Window length.",
)
@click.option(
    "--frames-per-window", type=int, default=default_of("frames_per_window"), show_default=True
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def info(path: Path, window_s: float, frames_per_window: int, as_json: bool) -> None:
    """Show a clip's metadata and the windows gaze samples from it."""
    if window_s <= 0 or frames_per_window < 1:
        raise click.BadParameter("--window-s must be > 0 and --frames-per-window >= 1")
    decoded = open_clip(
        path, SamplingSettings(window_s=window_s, frames_per_window=frames_per_window)
    )
    windows: list[dict[str, Any]] = [
        {
            "index": w.index,
            "start_s": w.start_s,
            "end_s": w.end_s,
            "frame_indices": w.frame_indices,
            "timestamps_s": w.timestamps_s,
        }
        for w in decoded.windows
    ]
    if as_json:
        print_json({"clip": decoded.info.model_dump(), "flags": decoded.flags, "windows": windows})
        return
    console = Console()
    meta = decoded.info
    console.print(f"[bold]{meta.path}[/bold]")
    console.print(
        f"{meta.duration_s:.3f} s · {meta.fps:g} fps · {meta.frame_count} frames decoded"
        f" (container: {meta.container_frame_count}) · {meta.width}x{meta.height} · "
        f"codec {meta.codec or '?'}"
    )
    for warning in meta.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
    table = Table(title=f"{len(windows)} windows", title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("span (s)")
    table.add_column("frames", justify="right")
    table.add_column("sampled at (s)")
    for w in windows:
        times = ", ".join(f"{t:.2f}" for t in w["timestamps_s"])
        table.add_row(
            str(w["index"]),
            f"{w['start_s']:.2f}-{w['end_s']:.2f}",
            str(len(w["frame_indices"])),
            times,
        )
    console.print(table)
