"""Input checks shared by subcommands: everything is checked before any clip work starts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gaze.errors import GazeInputError
from gaze.schema.inputs import check_instruction


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
