"""`gaze review RUN_OR_REPORTS --out LABELS.jsonl --annotator NAME`: a local page where a person
accepts, rejects, edits and adds events, clip by clip; the labels are a gaze manifest."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from gaze.cli.say import say_whole
from gaze.errors import GazeInputError


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="LABELS.jsonl (a manifest)."
)
@click.option("--annotator", required=True, help="Your name, kept with every decision.")
@click.option("--port", type=click.IntRange(0, 65535), default=8766, show_default=True)
def review(source: Path, out: Path, annotator: str, port: int) -> None:
    """Review a bench run folder, a folder of reports, or a manifest (annotate from scratch)
    on a page served on 127.0.0.1. Every decision is logged at once (OUT.log) and OUT is
    rewritten after each; run again with the same OUT to go on where you stopped."""
    from gaze.atomic import claim_output
    from gaze.cli.options import serve_until_stopped
    from gaze.view.review_clips import review_clips
    from gaze.view.review_page import review_page
    from gaze.view.review_server import ReviewServer
    from gaze.view.review_store import ReviewStore, check_labels, hold

    if not annotator.strip():
        raise GazeInputError("--annotator: give a name (it is kept with every decision)")
    check_labels(out)  # before the generic check: its message names the decision log
    claim_output(out, "jsonl", [source])
    clips = review_clips(source)
    with hold(out):
        store = ReviewStore(out, clips, annotator.strip())
        status = Console(stderr=True)

        def announce(server: ReviewServer) -> None:
            done = sum(1 for s in store.state.values() if s.status)
            status.print(
                f"reviewing {len(clips)} clips ({done} done); labels in {out}, decisions "
                f"logged in {store.log}"
            )
            say_whole(status, f"open {server.url} (Ctrl-C stops; nothing decided is lost)")

        serve_until_stopped(lambda: ReviewServer(store, review_page(), port), port, announce)
