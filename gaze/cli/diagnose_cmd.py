"""`gaze diagnose CLIP --instruction TEXT`: one clip in, one report out."""

from __future__ import annotations

import json
import sys
from importlib import resources
from pathlib import Path

import click
from rich.console import Console

from gaze.atomic import check_writable
from gaze.cli.options import initial_frame_or_error, instruction_or_error, no_model_yet
from gaze.errors import GazeInputError
from gaze.pixel_diagnosis import diagnose_pixels
from gaze.report.files import report_json, write_report
from gaze.report.terminal import render
from gaze.schema.inputs import ClipInput


def demo_clip() -> tuple[Path, str]:
    """The demo clip shipped in the package (made by the forge) and its instruction."""
    assets = resources.files("gaze") / "assets"
    meta = json.loads((assets / "demo.json").read_text(encoding="utf-8"))
    return Path(str(assets / "demo.mp4")), meta["instruction"]


@click.command()
@click.argument("clip", required=False, type=click.Path(path_type=Path))
@click.option("--instruction", "-i", help="The task instruction the clip should carry out.")
@click.option(
    "--initial-frame",
    type=click.Path(path_type=Path),
    help="Image of the initial scene (default: the clip's first frame).",
)
@click.option("--clip-id", help="Identifier used in the report (default: the file name).")
@click.option("--model", help="PROVIDER:MODEL backbone (not available in this version).")
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON report on stdout.")
@click.option("--out", type=click.Path(path_type=Path), help="Also write the JSON report here.")
@click.option("--demo", is_flag=True, help="Diagnose the demo clip shipped with gaze.")
def diagnose(
    clip: Path | None,
    instruction: str | None,
    initial_frame: Path | None,
    clip_id: str | None,
    model: str | None,
    as_json: bool,
    out: Path | None,
    demo: bool,
) -> None:
    """Diagnose one clip: failure events with type, span, severity and evidence."""
    if demo and clip is not None:
        raise GazeInputError("give either a CLIP or --demo, not both")
    if demo:
        clip, demo_instruction = demo_clip()
        instruction = instruction or demo_instruction
        clip_id = clip_id or "demo"
    if clip is None:
        raise GazeInputError("missing CLIP (a video file), or use --demo")
    no_model_yet(model)
    text = instruction_or_error(instruction)
    scene = initial_frame_or_error(initial_frame)
    if out is not None:
        check_writable(out)
    request = ClipInput(
        clip_id=clip_id or clip.stem, video=str(clip), instruction=text, initial_frame=scene
    )
    status = Console(stderr=True)
    with status.status(f"diagnosing {clip.name} from pixel evidence …"):
        report = diagnose_pixels(request)
    if out is not None:
        write_report(report, out)
    if as_json:
        sys.stdout.write(report_json(report))
    else:
        render(report, Console())
        if out is not None:
            status.print(f"report written to {out}")
