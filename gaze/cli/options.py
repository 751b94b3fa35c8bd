"""Input checks shared by subcommands: everything is checked before any clip work starts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gaze.errors import GazeInputError
from gaze.schema.input_rules import check_instruction
from gaze.settings.context import SECTIONS, default_of, description_of

F = TypeVar("F", bound=Callable[..., Any])


def sections_option() -> Callable[[F], F]:
    """``--sections`` (``--judges``: its old name, kept until 0.2), one definition for every
    command that runs the graph."""
    return click.option(
        "--sections",
        "--judges",
        "sections",
        default=",".join(default_of("sections")),
        show_default=True,
        help=f"Comma-separated report sections: {', '.join(SECTIONS)} (--judges: the old name, "
        f"kept until 0.2). {description_of('sections')}",
    )


def sections_of(text: str) -> list[str]:
    return [j.strip() for j in text.split(",") if j.strip()]


def instruction_or_error(text: str | None) -> str:
    if text is None:
        raise GazeInputError("--instruction is required (the task the clip should show)")
    try:
        return check_instruction(text)
    except ValueError as exc:
        raise GazeInputError(f"--instruction: {exc}") from None


def initial_frame_or_error(path: Path | None) -> str | None:
    if path is None:
        return None
    if not path.is_file():
        raise GazeInputError(f"--initial-frame: no such file: {path}")
    import cv2  # only for --initial-frame: the other checks here need no OpenCV

    if cv2.imread(str(path)) is None:
        raise GazeInputError(f"--initial-frame: {path} is not an image gaze can read")
    return str(path)


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def serve_until_stopped(
    make: Callable[[], Any], port: int, announce: Callable[[Any], None]
) -> None:
    """Start a local server (``make``), say where (``announce``), serve until Ctrl-C."""
    try:
        server = make()
    except OSError as exc:
        raise GazeInputError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror}") from exc
    announce(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
