"""`gaze diagnose CLIP --instruction TEXT`: one clip in, one report out."""

from __future__ import annotations

import asyncio
import json
import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gaze.atomic import claim_output, to_stdout
from gaze.cli import collector
from gaze.cli.context_options import context_from, context_options
from gaze.cli.options import (
    initial_frame_or_error,
    instruction_or_error,
    sections_of,
    sections_option,
)
from gaze.cli.progress_bar import GraphProgress
from gaze.errors import GazeInputError
from gaze.models.registry import parse_role_bindings
from gaze.schema.input_rules import clip_fields
from gaze.settings.context import (
    GazeContext,
    check_pixel_default,
    has_model,
)

if TYPE_CHECKING:  # the report's modules load while the clip runs, not before its first request
    from gaze.schema.report import Report


def demo_clip() -> tuple[Path, str]:
    """The demo clip shipped in the package (made by the forge) and its instruction."""
    assets = resources.files("gaze") / "assets"
    meta = json.loads((assets / "demo.json").read_text(encoding="utf-8"))
    return Path(str(assets / "demo.mp4")), meta["instruction"]


def _say(message: str) -> None:
    """One status line on standard error (Rich loads once the run's first request has left)."""
    from rich.console import Console

    from gaze.cli.say import say_whole

    say_whole(Console(stderr=True), message)


def _run_graph(request: dict[str, Any], context: GazeContext, transcript: Path | None) -> Report:
    from gaze.api import adiagnose
    from gaze.atomic import atomic_write_text
    from gaze.models.transcript import recording

    def on_update(node: str, update: dict[str, Any]) -> None:
        if node != "progress_note":  # the graph runs: its module, the last to load, has loaded
            collector.imports_done()
        progress(node, update)

    async def recorded() -> Report:
        with recording(request["clip_id"]) as log:
            try:
                return await adiagnose(**request, context=context, on_update=on_update)
            finally:  # a clip that failed keeps the exchanges that explain why
                if transcript is not None:
                    await asyncio.to_thread(atomic_write_text, transcript, log.text())

    with GraphProgress(Path(request["video"]).name) as progress:
        return asyncio.run(recorded())


@click.command()
@click.argument("clip", required=False, type=click.Path(path_type=Path))
@click.option("--instruction", "-i", help="The task instruction the clip should carry out.")
@click.option(
    "--initial-frame",
    type=click.Path(path_type=Path),
    help="Image of the initial scene (default: the clip's first frame).",
)
@click.option("--clip-id", help="Identifier used in the report (default: the file name).")
@context_options()
@click.option(
    "--role",
    "roles",
    multiple=True,
    metavar="ROLE=PROVIDER:MODEL[,base_url=URL][,key_env=VAR]",
    help="Bind one role to its own backbone, optionally with its own endpoint and key variable "
    "(repeatable).",
)
@sections_option()
@click.option("--json", "as_json", is_flag=True, help="Print only the JSON report on stdout.")
@click.option("--out", type=click.Path(path_type=Path), help="Also write the JSON report here.")
@click.option(
    "--html",
    "html_out",
    type=click.Path(path_type=Path),
    help="Also write a self-contained HTML report here (key frames inside, video linked).",
)
@click.option(
    "--embed-video",
    is_flag=True,
    help="Inline the video in the HTML report too, so the page works when moved alone.",
)
@click.option(
    "--transcript",
    type=click.Path(path_type=Path),
    help="Also write every model exchange here (JSON lines: prompt, raw reply, parsed result "
    "or error, tokens, latency; no secrets). Kept when the clip fails.",
)
@click.option("--demo", is_flag=True, help="Diagnose the demo clip shipped with gaze.")
def diagnose(
    clip: Path | None,
    instruction: str | None,
    initial_frame: Path | None,
    clip_id: str | None,
    roles: tuple[str, ...],
    sections: str,
    as_json: bool,
    out: Path | None,
    html_out: Path | None,
    embed_video: bool,
    transcript: Path | None,
    demo: bool,
    **options: Any,
) -> None:
    """Diagnose one clip: failure events with type, span, severity and evidence."""
    if embed_video and html_out is None:
        raise GazeInputError("--embed-video needs --html")
    if demo and clip is not None:
        raise GazeInputError("give either a CLIP or --demo, not both")
    if demo:
        clip, demo_instruction = demo_clip()
        instruction = instruction or demo_instruction
        clip_id = clip_id or "demo"
    if clip is None:
        raise GazeInputError("missing CLIP (a video file), or use --demo")
    text = instruction_or_error(instruction)
    scene = initial_frame_or_error(initial_frame)
    inputs = [clip, *([Path(scene)] if scene else [])]
    if to_stdout(out):
        raise GazeInputError("--json puts the report on standard output; --out names a file")
    if to_stdout(html_out):
        raise GazeInputError("--html names a file (a page is written beside its video)")
    if out is not None:
        claim_output(out, "json", inputs)
    if html_out is not None:
        claim_output(html_out, "html", inputs, [out] if out else [])
    if transcript is not None:
        if to_stdout(transcript):
            raise GazeInputError("--transcript names a file")
        claim_output(transcript, "jsonl", inputs, [p for p in (out, html_out) if p])
    # checked by the model's rules, the model built only where it is needed (see input_rules)
    request = clip_fields(clip, text, scene, clip_id)
    context = context_from(
        options, roles=parse_role_bindings(list(roles)), sections=sections_of(sections)
    )
    if has_model(context):
        report = _run_graph(request, context, transcript)
    else:
        check_pixel_default(context)
        from rich.console import Console

        from gaze.pixels.diagnosis import diagnose_pixels
        from gaze.schema.inputs import ClipInput

        with Console(stderr=True).status(f"diagnosing {clip.name} from pixel evidence …"):
            report = diagnose_pixels(ClipInput(**request))
    from gaze.report.files import report_json, write_html, write_report
    from gaze.report.terminal import render, report_console

    if out is not None:
        write_report(report, out)
    if html_out is not None:
        write_html(report, html_out, clip, embed_video, transcript)
    if as_json:
        sys.stdout.write(report_json(report))
    else:
        render(report, report_console())
    if out is not None:
        _say(f"report written to {out}")
    if html_out is not None:
        _say(f"page written to {html_out}")
    if transcript is not None and transcript.exists():
        _say(f"transcript written to {transcript}")
