"""`gaze view RUNDIR`: a static site over a benchmark run, optionally compared and served."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from gaze.cli.say import say_whole
from gaze.errors import GazeInputError


@click.command()
@click.argument("rundir", type=click.Path(path_type=Path))
@click.option(
    "--compare",
    "others",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Another run on the same manifest, shown side by side (compare.html); repeatable.",
)
@click.option(
    "--scores",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A `gaze bench score` output for RUNDIR kept elsewhere (repeatable); score files "
    "inside RUNDIR are found on their own.",
)
@click.option("--out", type=click.Path(path_type=Path), help="Site folder (default RUNDIR/view).")
@click.option("--serve", is_flag=True, help="Serve the site on 127.0.0.1 (seeking works).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
def view(
    rundir: Path,
    others: tuple[Path, ...],
    scores: tuple[Path, ...],
    out: Path | None,
    serve: bool,
    port: int,
) -> None:
    """Write a static site for RUNDIR: run settings and cost, leaderboard, clip table, a page
    per clip, and with --compare a side-by-side view of the runs."""
    from gaze.view.site import build_site

    for path in scores:
        if not path.is_file():
            raise GazeInputError(f"no such scores file: {path}")
    status = Console(stderr=True)
    rundirs = [rundir, *others]
    with status.status("writing pages …") as spinner:
        site = build_site(rundirs, out, scores, lambda c: spinner.update(f"page of {c} …"))
    for problem in site.problems:
        status.print(f"[yellow]{problem}[/yellow]")
    say_whole(status, f"{len(site.pages)} pages written; open {site.index}")
    if not serve:
        return
    from gaze.cli.options import serve_until_stopped
    from gaze.view.serve import site_server

    serve_until_stopped(
        lambda: site_server(site.folder, site.pages, site.videos, port),
        port,
        lambda server: say_whole(status, f"serving {server.url(site.index)} (Ctrl-C stops)"),
    )
