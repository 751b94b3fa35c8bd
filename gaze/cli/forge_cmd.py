"""`gaze forge OUTDIR --count N --seed S [--v2]`: synthetic clips with injected failures."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
from rich.console import Console

from gaze.errors import GazeInputError


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
    help="Container of the written clips (v1; v2 picks h264 .mp4 or VP9 .webm per clip).",
)
@click.option(
    "--v2",
    "v2",
    is_flag=True,
    help="Forge v2: textured scenes, several objects, camera pans and zooms, light drift, "
    "10-30 fps, 256-1280 px, h264/VP9; also freezes, glitches and duplicates.",
)
@click.option(
    "--max-side", type=int, default=None, help="v2: largest frame side allowed (e.g. 640)."
)
@click.option(
    "--stage",
    type=click.Choice(["varied", "fixed"]),
    default="varied",
    show_default=True,
    help="v2: varied = every camera path and textured tables; fixed = a still camera over a "
    "flat table, the gripper sweeping across it, black, grey and white objects among coloured.",
)
def forge(
    outdir: Path, count: int, seed: int, fmt: str, v2: bool, max_side: int | None, stage: str
) -> None:
    """Write synthetic pick-and-place clips (clean and with injected failures) + manifest.jsonl."""
    console = Console(stderr=True)
    if stage != "varied" and not v2:
        raise GazeInputError("--stage belongs to forge v2: add --v2")
    with console.status(f"forging {count} clips …"):
        if v2:
            from gaze.bench.forge2 import forge_set as forge_v2

            rows = forge_v2(outdir, count, seed, max_side=max_side, stage=stage)
        else:
            from gaze.bench.forge import forge_set

            rows = forge_set(outdir, count, seed, suffix=f".{fmt}")
    kinds = Counter(e.type for r in rows for e in r.events)
    clean = sum(1 for r in rows if not r.events)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    console.print(
        f"wrote {len(rows)} clips ({clean} clean; {summary}) and {outdir / 'manifest.jsonl'}"
    )
