"""`gaze bench ...`: scoring evaluators against human annotations, and batch runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from gaze.atomic import claim_output, to_stdout
from gaze.bench.results import write_results
from gaze.bench.score_cases import HEADLINE
from gaze.cli.say import say_whole
from gaze.environment import from_environment
from gaze.errors import GazeInputError
from gaze.metrics import RESAMPLES
from gaze.report.fit import print_fitted

F = TypeVar("F", bound=Callable[..., Any])


def resampling() -> Callable[[F], F]:
    """``--bootstrap N`` and ``--seed S``: the resampling of every interval a command prints."""

    def decorate(command: F) -> F:
        command = click.option("--seed", type=int, default=0, show_default=True)(command)
        return click.option(
            "--bootstrap",
            "n_boot",
            type=click.IntRange(0, 100_000),
            default=RESAMPLES,
            show_default=True,
            help="Resamples of condition groups for 95% intervals.",
        )(command)

    return decorate


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
@resampling()
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
    say_whole(console, f"metrics written to {out}")


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
@resampling()
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


@bench.command("annotators")
@click.argument("first", type=click.Path(path_type=Path))
@click.argument("second", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), required=True, help="AGREEMENT.json")
@resampling()
def annotators_cmd(first: Path, second: Path, out: Path, n_boot: int, seed: int) -> None:
    """Two annotators' manifests of the same clips against each other: type agreement
    (Krippendorff's alpha), temporal IoU of paired events, event F1 and clean/not-clean kappa,
    with bootstrap intervals: the human ceiling beside a method's scores."""
    from gaze.bench.annotators import METRICS, annotator_agreement

    claim_output(out, "json", [first, second])
    result = annotator_agreement(first, second, n_boot=n_boot, seed=seed)
    write_results(out, result, "annotators")
    rows = []
    for name in METRICS:
        value, interval = result[name], result["ci"].get(name)
        shown = "—" if value is None else f"{value:.3f}"
        if interval and interval[0] is not None and interval[1] is not None:
            shown += f" [{interval[0]:.3f}, {interval[1]:.3f}]"
        rows.append([name, shown])
    title = (
        f"annotators: {result['n_clips']} clips, {result['n_events_a']} / "
        f"{result['n_events_b']} events, {result['n_pairs']} paired"
    )
    print_fitted(Console(stderr=to_stdout(out)), title, ["metric", "value [95 %]"], rows)
    for key, path in (("only_in_first", first), ("only_in_second", second)):
        if result[key]:
            say_whole(Console(stderr=True), f"{len(result[key])} clip(s) only in {path}: left out")


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


from gaze.cli.bench_run_cmd import run_cmd  # noqa: E402  (registered after the group exists)

bench.add_command(run_cmd)
