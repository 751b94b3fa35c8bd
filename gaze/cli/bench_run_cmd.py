"""`gaze bench run`: a method (or several, or several models) over every clip of a manifest,
one run folder each."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from gaze.bench import B2_SAMPLES, CLIPS_IN_FLIGHT
from gaze.bench.methods import METHODS as RUN_METHODS
from gaze.cli.config_file import config_option, used_config
from gaze.cli.context_options import context_from, context_options
from gaze.cli.options import sections_of, sections_option
from gaze.errors import GazeInputError
from gaze.models.protocol import ROLES


@click.command("run")
@click.argument("manifest", type=click.Path(path_type=Path))
@config_option()
@click.option(
    "--method",
    "methods",
    type=click.Choice(RUN_METHODS),
    multiple=True,
    default=["robogaze"],
    show_default=True,
    help="robogaze (the graph), pixel (no model: pixel evidence only), or a control baseline; "
    "repeat it to run each method, one run folder each.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="RUNDIR (with several methods or models: the folder holding one RUNDIR per run).",
)
@context_options(several_models=True)
@sections_option()
@click.option(
    "--role", "roles", multiple=True, metavar="ROLE=PROVIDER:MODEL[,base_url=URL][,key_env=VAR]"
)
@click.option(
    "--clips-in-flight",
    "--clips",
    "clips",
    type=click.IntRange(1, 1024),
    default=CLIPS_IN_FLIGHT,
    show_default=True,
    help="Clips worked on at once (--concurrency bounds backbone requests, all clips together; "
    "--clips is its old name, kept until 0.2).",
)
@click.option(
    "--only",
    multiple=True,
    metavar="GLOB",
    help="Run only the clips whose id matches (repeatable; shell glob, e.g. 'droid_*').",
)
@click.option(
    "--skip",
    multiple=True,
    metavar="GLOB",
    help="Leave out the clips whose id matches (repeatable).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help="At most N clips (after --only/--skip).",
)
@click.option(
    "--samples",
    type=click.IntRange(1, 50),
    default=B2_SAMPLES,
    show_default=True,
    help="b2: self-consistency samples.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where clips run: this process, or a Ray cluster (the 'ray' extra).",
)
@click.option(
    "--ray-address",
    metavar="ADDR",
    help="Ray cluster to join (e.g. 10.0.0.1:6379 or 'auto'; default: start Ray locally).",
)
@click.option(
    "--ray-workers",
    type=click.IntRange(0, 4096),
    default=0,
    show_default=True,
    help="Ray workers (one CPU each; each runs --clips clips at once); 0: one per CPU.",
)
@click.option(
    "--ray-gpus-per-worker",
    type=click.FloatRange(0),
    default=0.0,
    show_default=True,
    help="GPUs each Ray worker holds (for --model vllm:MODEL, an in-process engine per worker).",
)
@click.option(
    "--batch-api",
    is_flag=True,
    help="Send the calls through the provider's batch API (OpenAI Batch, Gemini batch mode: "
    "half the price, results within a day). Each run collects what finished, takes every "
    "clip one stage further and submits what it needs next: run it again until no clip waits.",
)
@click.option(
    "--batch-poll-s",
    type=click.FloatRange(0),
    default=0.0,
    show_default=True,
    help="With --batch-api: stay and run another round this many seconds after each, until no "
    "clip waits (0: one round, then return).",
)
@click.option(
    "--batch-live",
    "batch_live",
    multiple=True,
    type=click.Choice(ROLES),
    help="With --batch-api: send this role's calls live, at the full price (repeatable). Each "
    "batched stage costs a clip a round; grounding and router are one small call per clip "
    "(the router reads text only), so '--batch-live grounding --batch-live router' takes a "
    "clip through in two rounds fewer. A run keeps its first round's choice.",
)
def run_cmd(
    manifest: Path,
    methods: tuple[str, ...],
    out: Path,
    sections: str,
    roles: tuple[str, ...],
    clips: int,
    only: tuple[str, ...],
    skip: tuple[str, ...],
    limit: int | None,
    samples: int,
    executor: str,
    ray_address: str | None,
    ray_workers: int,
    ray_gpus_per_worker: float,
    batch_api: bool,
    batch_poll_s: float,
    batch_live: tuple[str, ...],
    **options: Any,
) -> None:
    """Run a method over every clip of MANIFEST; one report per clip in RUNDIR/reports.

    Several --method or --model values run one after the other, each into its own folder
    inside --out (named by method and model); every run is checked before the first starts."""
    import asyncio

    from gaze.bench.run import PreparedRun, RunSummary, execute_run, prepare_run
    from gaze.bench.selection import Selection
    from gaze.cli.progress_bar import BatchProgress
    from gaze.environment import ENVIRONMENT
    from gaze.models.registry import parse_role_bindings
    from gaze.settings.context import has_model

    models: list[str | None] = list(dict.fromkeys(options.pop("model") or ())) or [None]
    methods = tuple(dict.fromkeys(methods))
    bindings = parse_role_bindings(list(roles))
    base = context_from(options, roles=bindings, sections=sections_of(sections))
    runs = run_folders(out, methods, models)
    contexts = {}
    for method, model in runs:
        ctx = base if model is None else dataclasses.replace(base, model=model)
        if method != "pixel" and not has_model(ctx):
            raise GazeInputError(
                f"bench run needs a model: --model PROVIDER:MODEL (or {ENVIRONMENT['model']})"
            )
        contexts[method, model] = ctx

    if executor == "local" and (ray_address or ray_workers or ray_gpus_per_worker):
        raise GazeInputError(
            "--ray-address, --ray-workers and --ray-gpus-per-worker need --executor ray"
        )
    if batch_api and executor == "ray":
        raise GazeInputError("--batch-api runs on the local executor (the provider does the work)")
    if batch_poll_s and not batch_api:
        raise GazeInputError("--batch-poll-s needs --batch-api")
    if batch_live and not batch_api:
        raise GazeInputError("--batch-live needs --batch-api")
    if executor == "ray":
        from gaze.bench.ray_run import import_ray

        import_ray()  # a missing extra fails before any work
    config = used_config()
    console = Console(stderr=True)

    async def prepare() -> list[PreparedRun]:
        selection = Selection(only, skip, limit)
        plans = []
        for (method, model), folder in runs.items():
            plan = await prepare_run(
                manifest,
                method,
                folder,
                contexts[method, model],
                samples=samples,
                selection=selection,
                config=config,
            )
            if batch_api:
                from gaze.bench.batch_run import batch_jobs, check_live_roles

                batch_jobs(plan)  # a backbone without a batch API fails before any work
                await asyncio.to_thread(check_live_roles, plan, frozenset(batch_live))
            plans.append(plan)
        return plans

    async def execute(plan: PreparedRun, label: str) -> RunSummary:
        if batch_api:
            return await batch_rounds(plan, label)
        with BatchProgress(console, len(plan.rows), label) as progress:
            if executor == "ray":
                from gaze.bench.ray_run import execute_on_ray

                return await execute_on_ray(
                    plan,
                    address=ray_address,
                    workers=ray_workers,
                    clip_concurrency=clips,
                    gpus_per_worker=ray_gpus_per_worker,
                    on_progress=progress,
                )
            return await execute_run(plan, clip_concurrency=clips, on_progress=progress)

    async def batch_rounds(plan: PreparedRun, label: str) -> RunSummary:
        from gaze.bench.batch_run import batch_round, round_line

        first = True  # a new command redoes what an earlier one failed, as live runs do
        while True:
            with BatchProgress(console, len(plan.rows), label) as progress:
                summary, report = await batch_round(
                    plan,
                    clip_concurrency=clips,
                    on_progress=progress,
                    fresh_budgets=first,
                    live_roles=frozenset(batch_live),
                )
            first = False
            console.print(round_line(summary, report), soft_wrap=True)
            for problem in report.problems:
                console.print(f"[yellow]batch[/yellow] {problem}")
            if not summary.waiting or not batch_poll_s:
                return summary
            await asyncio.sleep(batch_poll_s)

    plans = asyncio.run(prepare())
    failed = False
    for plan in plans:
        label = plan.method if len(plans) == 1 else plan.outdir.name
        summary = asyncio.run(execute(plan, label))
        console.print(
            f"{len(summary.done)} done, {len(summary.skipped)} already done (resumed), "
            f"{len(summary.failed)} failed; reports in {plan.outdir / 'reports'}"
        )
        for clip_id, reason in sorted(summary.failed.items()):
            console.print(f"[red]failed[/red] {clip_id}: {reason}")
        if summary.waiting:
            console.print(
                f"{len(summary.waiting)} clips wait for batch replies: run the same command "
                "again to collect them"
            )
        failed = failed or bool(summary.failed)
    if failed:
        raise click.exceptions.Exit(1)


def run_folders(
    out: Path, methods: tuple[str, ...], models: list[str | None]
) -> dict[tuple[str, str | None], Path]:
    """Each (method, model) run and its folder: ``out`` itself for a single run, else one
    folder inside it per run, named by what differs (the pixel method needs no model: one run)."""
    pairs = list(
        dict.fromkeys((m, None if m == "pixel" else model) for m in methods for model in models)
    )
    if len(pairs) == 1:
        return {pairs[0]: out}

    def name(method: str, model: str | None) -> str:
        parts = [method] if len(methods) > 1 or model is None else []
        if model is not None and len(models) > 1:
            parts.append(re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-"))
        return "__".join(parts) or method

    return {(m, model): out / name(m, model) for m, model in pairs}
