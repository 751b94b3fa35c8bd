"""`gaze bench ...`: scoring evaluators against human annotations, and batch runs."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from gaze.atomic import claim_output, to_stdout
from gaze.bench import B2_SAMPLES, CLIPS_IN_FLIGHT
from gaze.bench.methods import METHODS as RUN_METHODS
from gaze.bench.results import write_results
from gaze.bench.score_cases import HEADLINE
from gaze.cli.config_file import config_option, used_config
from gaze.cli.context_options import context_from, context_options
from gaze.cli.options import sections_of, sections_option
from gaze.environment import from_environment
from gaze.errors import GazeInputError
from gaze.metrics import RESAMPLES
from gaze.report.fit import print_fitted


@click.group()
def bench() -> None:
    """Benchmark evaluators and generators against human annotations."""


def _short(path: Path) -> str:
    """A file as a table title names it: its folder and name, not the whole path (a long path
    broke the title across lines at 80 columns)."""
    return str(Path(path.parent.name) / path.name) if path.parent.name else path.name


def metrics_table(result: dict[str, Any], title: str) -> Table:
    # as wide as its title, so the title stays on one line where the terminal allows
    table = Table(title=title, title_justify="left", min_width=len(title) + 1)
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
    help="Similarity judge: lexical, type (same failure type = 1), embed, llm, or table:FILE.",
)
@click.option(
    "--bootstrap",
    "n_boot",
    type=click.IntRange(0, 100_000),
    default=RESAMPLES,
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
@click.option(
    "--versus",
    type=click.Path(path_type=Path),
    help="Other predictions on the same clips: paired 95% intervals of the difference.",
)
@click.option(
    "--format",
    "source_format",
    type=click.Choice(["gaze", "robogaze", "glide"]),
    default="gaze",
    show_default=True,
    help="robogaze: MANIFEST is a folder of RoboGaze's ground-truth clip files; glide: MANIFEST "
    "and PREDICTIONS are GLiDE's groundtruth.json and batch_report.json (docs/compat.md).",
)
@click.option(
    "--compat",
    type=click.Choice(["glide-code", "robogaze-code"]),
    help="Score exactly as a peer's published code does: glide-code = GLiDE's evaluator "
    "(needs --format glide); robogaze-code = RoboGaze's original scripts/evaluate.py (with "
    "--format robogaze, its own glitches and report.json files) (docs/compat.md).",
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
    versus: Path | None,
    source_format: str,
    compat: str | None,
) -> None:
    """Score PREDICTIONS (JSONL or a folder of reports) against MANIFEST."""
    from gaze.bench.score_job import run_score

    inputs = [manifest, predictions, *([versus] if versus else [])]
    claim_output(out, "json", inputs)
    if write_judged is not None:
        claim_output(write_judged, "jsonl", inputs, [out])
    console = Console(stderr=True)
    if compat == "glide-code" and source_format != "glide":
        raise GazeInputError("--compat glide-code scores GLiDE's files: give --format glide")
    if source_format == "glide" and compat is None and protocol != "glide":
        raise GazeInputError(
            "GLiDE's files have no frame rate for frame-level IoU: score them with "
            "--protocol glide (gaze's) or --compat glide-code (GLiDE's own scorer)"
        )
    if compat is not None:
        from gaze.cli.peer_score import score_peer

        if versus is not None or slice_fields or protocol != "robogaze":
            raise GazeInputError(
                f"--compat {compat} computes only what the peer's code computes: drop "
                "--versus, --slice and --protocol (they belong to gaze's own protocol)"
            )

        score_peer(
            compat,
            manifest,
            predictions,
            out,
            source_format=source_format,
            judge=judge,
            model=model,
            base_url=base_url,
            write_judged=write_judged,
            console=console,
        )
        return
    with console.status("scoring …"):
        result = run_score(
            manifest,
            predictions,
            protocol=protocol,
            judge=judge,
            n_boot=n_boot,
            seed=seed,
            slice_fields=slice_fields,
            model=model or from_environment("model"),
            base_url=base_url or from_environment("base_url"),
            judged_out=write_judged,
            versus=versus,
            source_format=source_format,
        )
    write_results(out, result, "scores")
    table_file = judge.removeprefix("table:")
    judge_name = judge if table_file == judge else f"table:{_short(Path(table_file))}"
    title = (
        f"{protocol} · judge {judge_name} · {result['n_clips']} clips "
        f"({result['n_event_clips']} with events, {result['n_clean_clips']} clean)"
    )
    Console(stderr=to_stdout(out)).print(metrics_table(result, title))
    if "versus" in result and versus is not None:
        diff = result["versus"]
        Console(stderr=to_stdout(out)).print(
            metrics_table(
                {**diff["difference"], "ci": diff["ci"]},
                f"difference: {_short(predictions)} minus {_short(versus)} (paired)",
            )
        )
    for flag, meaning in (
        ("parse_failed", "no diagnosis call parsed: scored as empty reports"),
        ("partial", "some parts not assessed: scored with the events they have"),
    ):
        if result.get(f"n_{flag}"):
            console.print(
                f"[yellow]{result[f'n_{flag}']} clip(s) flagged {flag} ({meaning})[/yellow]: "
                + ", ".join(result[flag][:10])
            )
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


@bench.command("run")
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
    type=click.IntRange(1, 64),
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
            plans.append(plan)
        return plans

    async def execute(plan: PreparedRun, label: str) -> RunSummary:
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


@bench.command("screen")
@click.argument("manifest", type=click.Path(path_type=Path))
@click.argument("predictions", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="SCREEN.json")
@click.option(
    "--label",
    default="usable",
    show_default=True,
    help="Manifest field holding the usability label (bool).",
)
def screen_cmd(manifest: Path, predictions: Path, out: Path, label: str) -> None:
    """Rank candidate clips per condition by a method's reports: P@50, Bad@50, Pick1."""
    from gaze.bench.inputs import check_known_clips, load_manifest, load_predictions
    from gaze.bench.screening import screen

    claim_output(out, "json", [manifest, predictions])
    rows = load_manifest(manifest, for_diagnosis=False)
    preds = load_predictions(predictions)
    check_known_clips(rows, preds, predictions)
    result = screen(rows, {k: p.events for k, p in preds.items()}, label)
    write_results(out, result, "screen")
    table = Table(
        title=f"screening · {result['n_conditions']} conditions, {result['n_clips']} clips",
        title_justify="left",
    )
    for name in ("P@50", "Bad@50", "Pick1"):
        table.add_column(name, justify="right")
    table.add_row(
        *(
            "—" if result[k] is None else f"{result[k]:.3f}"
            for k in ("p_at_50", "bad_at_50", "pick1")
        )
    )
    Console(stderr=to_stdout(out)).print(table)


@bench.command("agreement")
@click.argument("manifest", type=click.Path(path_type=Path))
@click.argument("predictions", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="AGREEMENT.json")
@click.option(
    "--bootstrap", "n_boot", type=click.IntRange(0, 100_000), default=RESAMPLES, show_default=True
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--compat",
    type=click.Choice(["robojudge"]),
    help="Score exactly as RoboJudge's published code does (docs/compat.md).",
)
@click.option(
    "--format",
    "source_format",
    type=click.Choice(["gaze", "robojudge"]),
    default="gaze",
    show_default=True,
    help="robojudge: MANIFEST is RoboJudge's gold file and PREDICTIONS a judge's file of it.",
)
def agreement_cmd(
    manifest: Path,
    predictions: Path,
    out: Path,
    n_boot: int,
    seed: int,
    compat: str | None,
    source_format: str,
) -> None:
    """PA/IA scores against human scores, and the generators ranked by predicted PA/IA."""
    from gaze.bench.judges_jobs import agreement

    claim_output(out, "json", [manifest, predictions])
    result = agreement(
        manifest,
        predictions,
        n_boot=n_boot,
        seed=seed,
        compat=compat,
        source_format=source_format,
    )
    write_results(out, result, "agreement")
    title = "agreement with human scores" + (f" (compat {compat})" if compat else "")
    headers = ["axis", "n", "pearson", "spearman", "exact", "within_1", "mse", "over", "under"]
    rows = []
    for axis in ("pa", "ia"):
        r = result[axis]
        cells = [
            r["pearson"],
            r["spearman"],
            r["exact"],
            r["within_1"],
            r["mse"],
            r.get("over_rate"),
            r.get("under_rate"),
        ]
        rows.append([axis.upper(), str(r["n"]), *("—" if v is None else f"{v:.3f}" for v in cells)])
    print_fitted(Console(stderr=to_stdout(out)), title, headers, rows, right=headers)
    if result["skipped"]:
        Console(stderr=True).print(
            f"{len(result['skipped'])} human score(s) had no prediction "
            "and were skipped (listed in the output)"
        )
    for reason, count in sorted(result.get("import", {}).get("skipped_by_reason", {}).items()):
        Console(stderr=True).print(f"left out ({count}): {reason}")


@bench.command("direction")
@click.argument("manifest", type=click.Path(path_type=Path))
@click.argument("curves", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="DIRECTION.json")
def direction_cmd(manifest: Path, curves: Path, out: Path) -> None:
    """A progress judge's curves against rising/falling interval labels."""
    from gaze.bench.judges_jobs import direction_job

    claim_output(out, "json", [manifest, curves])
    result = direction_job(manifest, curves)
    write_results(out, result, "direction")
    acc = "—" if result["accuracy"] is None else f"{result['accuracy']:.3f}"
    Console(stderr=to_stdout(out)).print(
        f"macro-F1 {result['macro_f1']:.3f} · accuracy {acc} · {result['n']} steps evaluated"
    )
