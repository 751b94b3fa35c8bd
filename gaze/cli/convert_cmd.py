"""`gaze convert --from FORMAT INPUT --out OUT`: a peer's files as gaze's manifest;
`gaze convert --to FORMAT MANIFEST --out FOLDER`: the way back."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console

from gaze.atomic import atomic_write_text, check_writable
from gaze.errors import GazeInputError

FORMATS = ("robogaze",)


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@click.option("--from", "source_format", type=click.Choice(FORMATS), help="Read this format.")
@click.option("--to", "target_format", type=click.Choice(FORMATS), help="Write this format.")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    required=True,
    help="MANIFEST.jsonl (--from) or a folder (--to).",
)
@click.option(
    "--summary",
    "summary_out",
    type=click.Path(path_type=Path),
    help="Also write the import summary (every row left out, with its reason) as JSON.",
)
def convert(
    source: Path,
    source_format: str | None,
    target_format: str | None,
    out: Path,
    summary_out: Path | None,
) -> None:
    """Convert SOURCE (a peer's file or folder) into a gaze manifest (--from); rows that cannot
    be used are skipped and counted with their reason (exit 0 with the summary). With --to, a
    gaze manifest into the peer's files."""
    from gaze.formats.robogaze import read_manifest

    if (source_format is None) == (target_format is None):
        raise GazeInputError("give one of --from FORMAT or --to FORMAT")
    if not source.exists():
        raise GazeInputError(f"no such file or folder: {source}")
    if target_format is not None:
        _write_peer_files(source, out)
        return
    check_writable(out)
    if summary_out is not None:
        check_writable(summary_out)
    clips, summary = read_manifest(source, out.resolve().parent)
    atomic_write_text(out, "".join(c.model_dump_json(exclude_defaults=True) + "\n" for c in clips))
    report = summary.as_dict()
    if summary_out is not None:
        atomic_write_text(summary_out, json.dumps(report, indent=2) + "\n")
    console = Console(stderr=True)
    console.print(
        f"{report['written']} clip(s) written to {out} from {report['read']} file(s); "
        f"{report['skipped']} left out"
    )
    for reason, count in sorted(report["skipped_by_reason"].items()):
        console.print(f"  left out ({count}): {reason}")
    for change, count in sorted(report["adjusted"].items()):
        console.print(f"  adjusted ({count}): {change}")


def _write_peer_files(manifest: Path, out: Path) -> None:
    """One RoboGaze clip file per manifest row, in the folder ``out``."""
    from gaze.bench.inputs import load_manifest
    from gaze.formats.robogaze import clip_document

    rows = load_manifest(manifest)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GazeInputError(f"cannot create {out}: {exc.strerror}") from None
    for row in rows:
        document = clip_document(row, manifest.resolve().parent, out.resolve())
        atomic_write_text(out / f"{row.clip_id}.json", json.dumps(document, indent=2) + "\n")
    Console(stderr=True).print(f"{len(rows)} clip file(s) written to {out}")
