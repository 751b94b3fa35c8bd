"""`gaze bench ...`: scoring evaluators against human annotations, and batch runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from gaze.atomic import atomic_write_text, check_writable
from gaze.bench.score import HEADLINE


@click.group()
def bench() -> None:
    """Benchmark evaluators and generators against human annotations."""


def metrics_table(result: dict, title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("95% interval", justify="right")
    for key in HEADLINE:
        value = result.get(key)
        low, high = result.get("ci", {}).get(key) or [None, None]
        shown = "—" if value is None else f"{value:.3f}"
        interval = "" if low is None else f"[{low:.3f}, {high:.3f}]"
        table.add_row(key, shown, interval)
    return table


@bench.command()
@click.argument("manifest", type=click.Path(path_type=Path))
@click.argument("predictions", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="METRICS.json")
@click.option(
    "--protocol", type=click.Choice(["robogaze", "glide"]), default="robogaze", show_default=True
)
@click.option(
    "--judge",
    default="lexical",
    show_default=True,
    help="Similarity judge: lexical, embed, llm, or table:FILE.",
)
@click.option(
    "--bootstrap",
    "n_boot",
    type=click.IntRange(0, 100_000),
    default=1000,
    show_default=True,
    help="Resamples of condition groups for 95% intervals.",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--slice",
    "slice_fields",
    multiple=True,
    metavar="FIELD",
    help="Also slice by this manifest field (repeatable).",
)
@click.option("--model", help="Backbone of the llm judge (default: $GAZE_MODEL).")
@click.option("--base-url", help="OpenAI-compatible server of the llm judge.")
@click.option(
    "--write-judged",
    type=click.Path(path_type=Path),
    help="Write every judged pair as a table file (replay with --judge table:FILE).",
)
def score(
    manifest: Path,
    predictions: Path,
    out: Path,
    protocol: str,
    judge: str,
    n_boot: int,
    seed: int,
    slice_fields: tuple[str, ...],
    model: str | None,
    base_url: str | None,
    write_judged: Path | None,
) -> None:
    """Score PREDICTIONS (JSONL or a folder of reports) against MANIFEST."""
    from gaze.bench.scoring import run_score

    check_writable(out)
    if write_judged is not None:
        check_writable(write_judged)
    console = Console(stderr=True)
    with console.status("scoring …"):
        result = run_score(
            manifest,
            predictions,
            protocol=protocol,
            judge=judge,
            n_boot=n_boot,
            seed=seed,
            slice_fields=slice_fields,
            model=model or os.environ.get("GAZE_MODEL"),
            base_url=base_url or os.environ.get("GAZE_BASE_URL"),
            judged_out=write_judged,
        )
    atomic_write_text(out, json.dumps(result, indent=2) + "\n")
    title = (
        f"{protocol} · judge {judge} · {result['n_clips']} clips "
        f"({result['n_event_clips']} with events, {result['n_clean_clips']} clean)"
    )
    Console().print(metrics_table(result, title))
    if result["n_missing_predictions"]:
        console.print(
            f"[yellow]{result['n_missing_predictions']} clip(s) had no prediction and "
            f"were scored as empty reports[/yellow]: "
            + ", ".join(result["missing_predictions"][:10])
        )
    if result.get("n_left_out"):
        console.print(
            f"glide: {result['n_left_out']} manifest clip(s) without predictions left out"
        )
    console.print(f"metrics written to {out}")
