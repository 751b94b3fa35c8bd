"""`gaze forge OUTDIR --count N --seed S`: synthetic clips with injected failures."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
from rich.console import Console

from gaze.bench.forge import forge_set


@click.command()
@click.argument("outdir", type=click.Path(path_type=Path))
@click.option("--count", type=int, default=8, show_default=True, help="Number of clips.")
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed (same seed, same clips)."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mp4", "avi", "mkv", "webm", "gif"]),
    default="mp4",
    show_default=True,
    help="Container of the written clips.",
)
def forge(outdir: Path, count: int, seed: int, fmt: str) -> None:
    """Write synthetic pick-and-place clips (clean and with injected failures) + manifest.jsonl."""
    console = Console(stderr=True)
    with console.status(f"forging {count} clips …"):
        rows = forge_set(outdir, count, seed, suffix=f".{fmt}")
    kinds = Counter(e.type for r in rows for e in r.events)
    clean = sum(1 for r in rows if not r.events)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    console.print(
        f"wrote {len(rows)} clips ({clean} clean; {summary}) and {outdir / 'manifest.jsonl'}"
    )
