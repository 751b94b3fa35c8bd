"""`gaze probe`: known-answer probes on the user's own clips, a method run over them, and the
trust report (how often it finds what was injected, what it says of untouched clips)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console

from gaze.atomic import atomic_write_text, claim_folder
from gaze.bench import B2_SAMPLES, CLIPS_IN_FLIGHT
from gaze.bench.methods import METHODS
from gaze.cli.context_options import context_from, context_options
from gaze.cli.say import say_whole
from gaze.errors import GazeInputError

KINDS = (
    "freeze",
    "stutter",
    "glitch",
    "corruption",
    "blur",
    "low_visibility",
    "shake",
    "vanish",
    "appear",
    "jump",
)
"""Injected probe kinds (``gaze.bench.probe.make.INJECTED``; listed here so that the command's
help does not load OpenCV)."""
SEMANTIC = ("mismatch", "reversed", "cut", "loop")


def _names(text: str, known: tuple[str, ...], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise GazeInputError(f"unknown {what} {unknown}; known: {', '.join(known)}")
    return names


@click.command("probe")
@click.argument("source", type=click.Path(path_type=Path))
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="robogaze",
    show_default=True,
    help="The method to probe: robogaze (the graph), pixel (no model), or a control baseline.",
)
@click.option("--out", type=click.Path(path_type=Path), required=True, help="PROBE_DIR")
@click.option(
    "--kinds",
    default=",".join(KINDS),
    show_default=True,
    help="Injected probe kinds, comma-separated.",
)
@click.option(
    "--semantic",
    "semantic_kinds",
    default=None,
    help=f"Semantic probes, comma-separated ({', '.join(SEMANTIC)}); default all for a model "
    "method, none for pixel. 'none' for none.",
)
@click.option(
    "--repeat",
    type=click.IntRange(0, 20),
    default=0,
    show_default=True,
    help="Run each untouched clip this many times more, the response cache off (noise floor).",
)
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True)
@click.option(
    "--max-seconds",
    type=click.FloatRange(3, 600),
    default=15.0,
    show_default=True,
    help="Probe each clip's first seconds only (frames are held in memory while probing).",
)
@click.option("--instruction", help="The instruction of clips given without one.")
@click.option("--samples", type=click.IntRange(1, 50), default=B2_SAMPLES, show_default=True)
@click.option(
    "--clips-in-flight", type=click.IntRange(1, 64), default=CLIPS_IN_FLIGHT, show_default=True
)
@context_options()
@click.option(
    "--role", "roles", multiple=True, metavar="ROLE=PROVIDER:MODEL[,base_url=URL][,key_env=VAR]"
)
def probe(
    source: Path,
    method: str,
    out: Path,
    kinds: str,
    semantic_kinds: str | None,
    repeat: int,
    seed: int,
    max_seconds: float,
    instruction: str | None,
    samples: int,
    clips_in_flight: int,
    roles: tuple[str, ...],
    **options: Any,
) -> None:
    """Probe SOURCE (a video, a folder of videos, or a gaze manifest): known failures injected
    into its clips, semantic variants and repeats, METHOD run over all of them, and the trust
    report in PROBE_DIR (trust.json, trust.html)."""
    import asyncio

    from gaze.bench.probe.make import make_probe_set, sources_of
    from gaze.bench.probe.run import run_probe
    from gaze.bench.probe.trust import headline, trust_report
    from gaze.bench.results import write_results
    from gaze.cli.progress_bar import BatchProgress
    from gaze.models.registry import parse_role_bindings
    from gaze.settings.context import has_model
    from gaze.view.trust import trust_page

    injected = _names(kinds, KINDS, "probe kinds")
    default_semantic = ",".join(SEMANTIC) if method != "pixel" else ""
    chosen = default_semantic if semantic_kinds is None else semantic_kinds
    semantic = [] if chosen == "none" else _names(chosen, SEMANTIC, "semantic probes")
    ctx = context_from(options, roles=parse_role_bindings(list(roles)))
    if method != "pixel" and not has_model(ctx):
        raise GazeInputError(f"probing {method} needs a model: --model PROVIDER:MODEL")
    if method == "pixel" and semantic:
        raise GazeInputError("semantic probes need a model method; the pixel default reads none")
    sources = sources_of(source, instruction)
    if method != "pixel" and any(not s.instruction for s in sources):
        raise GazeInputError(
            f"probing {method} needs each clip's instruction: --instruction, or a manifest"
        )
    folder = claim_folder(out, [source], empty=True)
    console = Console(stderr=True)
    with console.status("making probes …") as status:
        made = make_probe_set(
            sources,
            folder,
            seed=seed,
            kinds=injected,
            semantic=semantic,
            max_seconds=max_seconds,
            on_clip=lambda clip: status.update(f"making probes: {clip} …"),
        )
    clips = len(made.rows) + len(made.semantic) + repeat * len(sources)
    with BatchProgress(console, clips, method) as progress:
        summaries = asyncio.run(
            run_probe(
                folder,
                method,
                ctx,
                repeat=repeat,
                samples=samples,
                clips_in_flight=clips_in_flight,
                on_progress=progress,
            )
        )
    report = trust_report(folder, method)
    report["skipped"] = made.skipped
    report["failed"] = {k: v for s in summaries.values() for k, v in s.failed.items()}
    report["headline"] = headline(report)
    write_results(folder / "trust.json", report, "trust")
    atomic_write_text(folder / "trust.html", trust_page(report))
    for line in report["headline"]:
        click.echo(line)
    for clip_id, reason in sorted(made.skipped.items()):
        console.print(f"[yellow]skipped[/yellow] {clip_id}: {reason}")
    for clip_id, reason in sorted(report["failed"].items()):
        console.print(f"[red]failed[/red] {clip_id}: {reason}")
    say_whole(console, f"trust report: {folder / 'trust.json'} and {folder / 'trust.html'}")
