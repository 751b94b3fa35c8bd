"""`gaze progress metrics CURVES.jsonl --out OPD.json`: curve processing, OPD metrics and
leaderboards."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from gaze.atomic import claim_output, to_stdout
from gaze.bench.results import write_results
from gaze.report.fit import print_fitted

SHOWN = ("SR", "MP", "MC50", "PPL", "CRA", "STR", "DRR", "FNS", "SQS")


@click.group()
def progress() -> None:
    """Task-progress curves and their outcome/process/diagnosis metrics."""


@progress.command()
@click.argument("curves", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="OPD.json")
@click.option("--v1", "v1", is_flag=True, help="The earlier paper definitions (values x100).")
@click.option(
    "--success-source",
    type=click.Choice(["curve", "label"]),
    default="curve",
    show_default=True,
    help="Success from the curve (MP >= 0.99) or the row's label.",
)
@click.option(
    "--compat",
    type=click.Choice(["prm"]),
    help="Score exactly as a peer's code does: prm = the PRM-as-a-Judge toolkit (docs/compat.md).",
)
@click.option(
    "--format",
    "source_format",
    type=click.Choice(["gaze", "prm"]),
    default="gaze",
    show_default=True,
    help="prm: CURVES is a PRM-as-a-Judge toolkit manifest or per_case.jsonl, scored by gaze's "
    "own definitions (raw curves, label words; docs/compat.md).",
)
def metrics(
    curves: Path,
    out: Path,
    v1: bool,
    success_source: str,
    compat: str | None,
    source_format: str,
) -> None:
    """Process every curve and compute OPD metrics and per-model leaderboards."""
    from gaze.bench.judges_jobs import progress_metrics

    claim_output(out, "json", [curves])
    result = progress_metrics(
        curves, v1=v1, success_source=success_source, compat=compat, source_format=source_format
    )
    write_results(out, result, "progress_metrics")
    label = f"compat {result['compat'].split(':')[0]}" if compat else result["mode"]
    shown = [("M50" if k == "MC50" else k) for k in SHOWN] if compat else list(SHOWN)
    rows = [
        [
            str(row["model"]),
            str(row.get("n", row.get("num_cases"))),
            *("—" if row[k] is None else f"{row[k]:.3f}" for k in shown),
        ]
        for row in result["leaderboard"]["mean"]
    ]
    print_fitted(
        Console(stderr=to_stdout(out)),
        f"OPD leaderboard ({label}, mean over eligible rollouts)",
        ["model", "n", *shown],
        rows,
        right=["n", *shown],
    )
