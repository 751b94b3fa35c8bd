"""`gaze bench score --format glide --compat glide-code`: GLiDE's files scored by GLiDE's own
evaluator, reproduced (``gaze.metrics.glide_compat``), with its summary printed."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gaze.atomic import atomic_write_text
from gaze.graph.context import from_environment


def score_glide(
    reference: Path,
    predictions: Path,
    out: Path,
    judge: str,
    model: str | None,
    base_url: str | None,
    write_judged: Path | None,
    console: Console,
) -> None:
    from gaze.bench.score_job import run_glide_code

    with console.status("scoring as GLiDE's evaluator does …"):
        result = run_glide_code(
            reference,
            predictions,
            judge=judge,
            model=model or from_environment("model"),
            base_url=base_url or from_environment("base_url"),
            judged_out=write_judged,
        )
    atomic_write_text(out, json.dumps(result, indent=2) + "\n")
    summary = result["summary"]
    table = Table(title=f"{result['compat']} · judge {judge}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in summary.items():
        table.add_row(key, f"{value:.4f}" if isinstance(value, float) else str(value))
    Console().print(table)
    left = result["left_out"]
    console.print(
        f"{summary['num_videos']} videos in both files; left out as GLiDE does: "
        f"{len(left['reference_only'])} reference-only, {len(left['predicted_only'])} "
        f"prediction-only; metrics written to {out}"
    )
