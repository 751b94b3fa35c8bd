"""`gaze convert SOURCE --from FORMAT --out OUT`: a peer's files as gaze's (a manifest,
predictions or curves); `gaze convert SOURCE --to FORMAT --out OUT`: gaze's files in the peer's
format. What each conversion keeps and counts: docs/compat.md."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from gaze.atomic import atomic_write_text, claim_folder, claim_output, inside
from gaze.cli.say import say_whole
from gaze.errors import GazeInputError
from gaze.formats.convert import FROM_FORMATS, TO_FORMATS, Rows


def _jsonl(rows: Rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--from", "source_format", type=click.Choice(FROM_FORMATS), help="Read this format.")
@click.option("--to", "target_format", type=click.Choice(TO_FORMATS), help="Write this format.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="The file (or, for robogaze and robogaze-code, the folder) to write.",
)
@click.option(
    "--summary",
    "summary_out",
    type=click.Path(path_type=Path),
    help="Also write the import summary (every row left out, with its reason) as JSON.",
)
@click.option(
    "--curves",
    type=click.Path(path_type=Path),
    help="prm: the curves file written beside the manifest (--from) or read with it (--to).",
)
@click.option(
    "--fps",
    type=click.FloatRange(min=0, min_open=True),
    help="robogaze: frames per second of clips whose files give frames and no fps.",
)
@click.option(
    "--manifest",
    "manifest_for_fps",
    type=click.Path(path_type=Path),
    help="robogaze-code: the manifest whose clips' fps turn prediction times into frames.",
)
def convert(
    source: Path,
    source_format: str | None,
    target_format: str | None,
    out: Path,
    summary_out: Path | None,
    curves: Path | None,
    fps: float | None,
    manifest_for_fps: Path | None,
) -> None:
    """Convert SOURCE, a peer's file or folder, into gaze's files (--from): rows that cannot be
    used are skipped and counted with their reason (exit 0 with the summary). With --to, a gaze
    manifest or predictions file into the peer's files."""
    if (source_format is None) == (target_format is None):
        raise GazeInputError("give one of --from FORMAT or --to FORMAT")
    if not source.exists():
        raise GazeInputError(f"no such file or folder: {source}")
    _claim_outputs(source, source_format, target_format, out, summary_out, curves, manifest_for_fps)
    if target_format is not None:
        _export(source, target_format, out, curves, fps, manifest_for_fps)
        return
    from gaze.formats.convert import import_peer

    assert source_format is not None
    outputs, summary = import_peer(source_format, source, out.resolve().parent, fps)
    kinds = [k for k in ("manifest", "predictions", "curves") if outputs.get(k)]
    primary = kinds[0]
    atomic_write_text(out, _jsonl(outputs[primary]))
    console = Console(stderr=True)
    if "curves" in kinds[1:]:
        if curves is None:
            console.print(
                f"[yellow]{len(outputs['curves'])} curve(s) not written: "
                "give --curves FILE[/yellow]"
            )
        else:
            atomic_write_text(curves, _jsonl(outputs["curves"]))
            say_whole(console, f"{len(outputs['curves'])} curve(s) written to {curves}")
    report = summary.as_dict()
    if summary_out is not None:
        atomic_write_text(summary_out, json.dumps(report, indent=2) + "\n")
    say_whole(
        console,
        f"{len(outputs[primary])} {primary} row(s) written to {out} from {report['read']} "
        f"read; {report['skipped']} left out",
    )
    for reason, count in sorted(report["skipped_by_reason"].items()):
        console.print(f"  left out ({count}): {reason}")
    for change, count in sorted(report["adjusted"].items()):
        console.print(f"  adjusted ({count}): {change}")


FOLDER_TARGETS = ("robogaze", "robogaze-code")
"""--to formats written as a folder of files, one a clip."""


def _claim_outputs(
    source: Path,
    source_format: str | None,
    target_format: str | None,
    out: Path,
    summary_out: Path | None,
    curves: Path | None,
    manifest_for_fps: Path | None,
) -> None:
    """Every output checked against the output policy (``gaze.atomic``) before any work: none is
    an input or another output, none replaces what gaze did not write."""
    inputs = [source, *([manifest_for_fps] if manifest_for_fps else [])]
    if target_format is not None and curves is not None:
        inputs.append(curves)  # --to prm reads the curves
    if target_format in FOLDER_TARGETS:
        claim_folder(out, inputs, empty=False)
    else:
        claim_output(out, "json" if target_format == "glide" else "jsonl", inputs)
    written = [out]
    if summary_out is not None:
        claim_output(summary_out, "json", inputs, written)
        written.append(summary_out)
    if source_format is not None and curves is not None:
        claim_output(curves, "jsonl", inputs, written)


def _claim_files(out: Path, names: Sequence[tuple[str, ...]]) -> list[Path]:
    """The files a folder output writes, each inside ``out`` (a clip id never leads out of it)
    and each one gaze may replace; all checked before the first is written."""
    targets = []
    for parts in names:
        folder = out.resolve()
        for part in parts[:-1]:
            folder = inside(folder, part)
        target = inside(folder, parts[-1])
        if target.exists() or target.is_symlink():
            claim_output(target, "json")
        targets.append(target)
    return targets


def _export(
    source: Path,
    target: str,
    out: Path,
    curves: Path | None,
    fps: float | None,
    manifest_for_fps: Path | None,
) -> None:
    from gaze.bench.inputs import read_gaze
    from gaze.formats.convert import glide_document

    kind, rows = read_gaze(source)
    console = Console(stderr=True)
    if target == "robogaze":
        _need(kind, "manifest", target)
        _write_clip_files(source, out)
        return
    if target == "robogaze-code":
        _write_original(kind, rows, out, fps, manifest_for_fps)
        what = "report.json" if kind == "predictions" else "ground-truth"
        say_whole(console, f"{len(rows)} {what} file(s) written under {out}")
        return
    if target == "glide":
        atomic_write_text(out, json.dumps(glide_document(rows), indent=2) + "\n")
    elif target == "robojudge":
        from gaze.formats.robojudge import gold_document, prediction_document

        write = gold_document if kind == "manifest" else prediction_document
        atomic_write_text(out, _jsonl([write(r) for r in rows]))
    else:  # prm
        from gaze.formats.prm import toolkit_row

        _need(kind, "manifest", target)
        by_case = _curves(curves)
        atomic_write_text(out, _jsonl([toolkit_row(r, by_case.get(r["clip_id"])) for r in rows]))
    say_whole(console, f"{len(rows)} {kind} row(s) written to {out} as {target}")


def _need(kind: str, wanted: str, target: str) -> None:
    if kind != wanted:
        raise GazeInputError(f"--to {target} writes from a gaze {wanted}, not {kind}")


def _curves(path: Path | None) -> dict[str, dict[str, Any]]:
    from gaze.formats.jsonl import json_rows

    if path is None:
        return {}
    return {str(row.get("case_id")): row for _, row in json_rows(path)}


def _write_original(
    kind: str, rows: Rows, out: Path, fps: float | None, manifest: Path | None
) -> None:
    """The original RoboGaze code's files: one ``<clip_id>/report.json`` per prediction, or one
    ``<clip_id>.json`` ground-truth file per manifest row; frames from the fps of ``manifest``'s
    clips (a manifest being written: its own rows), else ``--fps``."""
    from gaze.bench.inputs import load_manifest
    from gaze.formats.robogaze_original import ground_truth_document, report_document
    from gaze.schema.manifest import ManifestClip, Prediction

    if manifest is not None:
        fps_of = {r.clip_id: r.fps for r in load_manifest(manifest, for_diagnosis=False)}
    elif kind == "manifest":  # already read: its rows carry their fps
        fps_of = {r["clip_id"]: r.get("fps") for r in rows}
    else:
        fps_of = {}
    if fps is None and not any(fps_of.values()):
        raise GazeInputError("--to robogaze-code needs --manifest MANIFEST or --fps F for frames")
    names = [
        (str(row["clip_id"]), "report.json")
        if kind == "predictions"
        else (f"{row['clip_id']}.json",)
        for row in rows
    ]
    targets = _claim_files(out, names)
    _mkdir(out)
    for row, target in zip(rows, targets, strict=True):
        clip_fps = fps_of.get(row["clip_id"]) or fps
        if kind == "predictions":
            document = report_document(Prediction.model_validate(row), clip_fps)
            _mkdir(target.parent)
        else:
            document = ground_truth_document(ManifestClip.model_validate(row), clip_fps)
        atomic_write_text(target, json.dumps(document, indent=2) + "\n")


def _mkdir(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GazeInputError(f"cannot create {folder}: {exc.strerror}") from None


def _write_clip_files(manifest: Path, out: Path) -> None:
    """One RoboGaze clip file per manifest row, in the folder ``out``."""
    from gaze.bench.inputs import load_manifest
    from gaze.formats.robogaze import clip_document

    rows = load_manifest(manifest, for_diagnosis=False)
    targets = _claim_files(out, [(f"{row.clip_id}.json",) for row in rows])
    _mkdir(out)
    for row, target in zip(rows, targets, strict=True):
        document = clip_document(row, manifest.resolve().parent, out.resolve())
        atomic_write_text(target, json.dumps(document, indent=2) + "\n")
    say_whole(Console(stderr=True), f"{len(rows)} clip file(s) written to {out}")
