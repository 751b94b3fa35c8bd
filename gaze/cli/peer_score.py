"""`gaze bench score --compat PEER`: files scored by a peer's own published scorer, reproduced
(``gaze.metrics.glide_compat``, ``gaze.metrics.robogaze_compat``), its summary printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from gaze.atomic import to_stdout
from gaze.bench.results import write_results
from gaze.cli.say import say_whole
from gaze.environment import from_environment


def _rows(summary: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    out = []
    for key, value in summary.items():
        if isinstance(value, dict):
            out += _rows(value, f"{prefix}{key}.")
        elif isinstance(value, list):
            out.append((prefix + key, "[" + ", ".join(f"{v:.4f}" for v in value) + "]"))
        else:
            out.append((prefix + key, f"{value:.4f}" if isinstance(value, float) else str(value)))
    return out


def score_peer(
    compat: str,
    reference: Path,
    predictions: Path,
    out: Path,
    *,
    source_format: str,
    judge: str,
    model: str | None,
    base_url: str | None,
    write_judged: Path | None,
    console: Console,
) -> None:
    from gaze.bench.score_job import run_glide_code, run_robogaze_code

    settings: dict[str, Any] = {
        "judge": judge,
        "model": model or from_environment("model"),
        "base_url": base_url or from_environment("base_url"),
        "judged_out": write_judged,
    }
    with console.status(f"scoring as the peer's own code does ({compat}) …"):
        if compat == "glide-code":
            result = run_glide_code(reference, predictions, **settings)
        else:
            result = run_robogaze_code(
                reference, predictions, source_format=source_format, **settings
            )
    write_results(out, result, "peer_scores")
    table = Table(title=f"{result['compat']} · judge {judge}", title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in _rows(result["summary"]):
        table.add_row(key, value)
    Console(stderr=to_stdout(out)).print(table)
    left = result["left_out"]
    say_whole(
        console,
        f"left out as the peer's code does: {len(left['reference_only'])} reference-only, "
        f"{len(left['predicted_only'])} prediction-only; metrics written to {out}",
    )
