"""Running a method over a probe set: the controls and injected variants, the semantic variants,
and the repeats (with the response cache off, so each repeat asks the model again), each as a
``bench run`` of its own in the probe folder (resumable, one report per clip)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from gaze.atomic import atomic_write_text
from gaze.bench.probe.make import repeat_rows
from gaze.bench.run import Progress, RunSummary, execute_run, prepare_run
from gaze.settings.context import GazeContext

PARTS = (("manifest.jsonl", "run"), ("semantic.jsonl", "semantic"), ("repeats.jsonl", "repeats"))
"""Each manifest of a probe set and the run folder its reports go to."""


async def run_probe(
    folder: Path,
    method: str,
    ctx: GazeContext,
    *,
    repeat: int,
    samples: int,
    clips_in_flight: int,
    on_progress: Progress | None = None,
) -> dict[str, RunSummary]:
    """Run ``method`` over every manifest of the probe set in ``folder``."""
    if repeat:
        rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]
        repeats = repeat_rows(rows, repeat)
        atomic_write_text(folder / "repeats.jsonl", "".join(json.dumps(r) + "\n" for r in repeats))
    summaries: dict[str, RunSummary] = {}
    for manifest, out in PARTS:
        if not (folder / manifest).exists():
            continue
        # repeats ask again: a cached answer would make any method look perfectly stable
        part_ctx = dataclasses.replace(ctx, use_cache=False) if out == "repeats" else ctx
        plan = await prepare_run(folder / manifest, method, folder / out, part_ctx, samples=samples)
        summaries[out] = await execute_run(
            plan, clip_concurrency=clips_in_flight, on_progress=on_progress
        )
    return summaries
