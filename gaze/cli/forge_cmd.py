"""`gaze forge OUTDIR --count N --seed S [--v2]`: synthetic clips with injected failures."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

from gaze.atomic import claim_folder
from gaze.errors import GazeInputError

if TYPE_CHECKING:
    from gaze.schema.manifest import ManifestClip


@click.command()
@click.argument("outdir", type=click.Path(path_type=Path))
@click.option("--count", type=int, default=8, show_default=True, help="Number of clips.")
@click.option(
    "--seed",
    type=click.IntRange(min=0, max=2**31 - 1),
    default=0,
    show_default=True,
    help="Seed (same seed, same clips).",
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
    "--max-side",
    type=click.IntRange(min=16),
    default=None,
    help="v2: largest frame side allowed (e.g. 640).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Forge into a folder that holds an earlier forge's clips and manifest (replaced); a "
    "folder holding anything else is still refused.",
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
    outdir: Path,
    count: int,
    seed: int,
    fmt: str,
    v2: bool,
    max_side: int | None,
    stage: str,
    force: bool,
) -> None:
    """Write synthetic pick-and-place clips (clean and with injected failures) + manifest.jsonl
    into a new or empty folder."""
    console = Console(stderr=True)
    if stage != "varied" and not v2:
        raise GazeInputError("--stage belongs to forge v2: add --v2")
    if count < 1:  # before the folder is looked at: nothing to forge is no reason to refuse it
        raise GazeInputError("--count must be at least 1")
    _claim(outdir, force)
    from gaze.cli.progress_bar import BatchProgress

    with BatchProgress(console, count, "forge", usage=False) as progress:

        def made(row: ManifestClip) -> None:
            progress(row.clip_id, None, None)

        if v2:
            from gaze.bench.forge2 import forge_set as forge_v2

            rows = forge_v2(outdir, count, seed, max_side=max_side, stage=stage, on_clip=made)
        else:
            from gaze.bench.forge import forge_set

            rows = forge_set(outdir, count, seed, suffix=f".{fmt}", on_clip=made)
    kinds = Counter(e.type for r in rows for e in r.events)
    clean = sum(1 for r in rows if not r.events)
    summary = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    console.print(
        f"wrote {len(rows)} clips ({clean} clean; {summary}) and {outdir / 'manifest.jsonl'}"
    )


def _claim(outdir: Path, force: bool) -> None:
    """A new or empty folder; with ``force``, also one holding only an earlier forge's output
    (its manifest, every row made by gaze's forge, and the clips it names)."""
    if not force:
        claim_folder(outdir, empty=True)
        return
    claim_folder(outdir, empty=False)
    if not outdir.is_dir():
        return
    from gaze.formats.jsonl import json_rows

    manifest = outdir / "manifest.jsonl"
    rows = [row for _, row in json_rows(manifest)] if manifest.is_file() else []
    ours = {"manifest.jsonl", "forge.json"}
    if all(str(r.get("generator", "")).startswith("gaze-forge") for r in rows):
        ours |= {str(r.get("video")) for r in rows}
    others = sorted(p.name for p in outdir.iterdir() if p.name not in ours)
    if others:
        raise GazeInputError(
            f"{outdir} holds files an earlier forge did not write ({others[0]}"
            f"{' and more' if len(others) > 1 else ''}); --force replaces only a forge's own "
            "output (nothing there was touched)"
        )
