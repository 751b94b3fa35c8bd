"""Input checks shared by subcommands: everything is checked before any clip work starts."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import cv2

import gaze  # noqa: F401  (quiets OpenCV logging before cv2 is imported)
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
    if cv2.imread(str(path)) is None:
        raise GazeInputError(f"--initial-frame: {path} is not an image gaze can read")
    return str(path)


def no_model_yet(model: str | None) -> None:
    """Model backbones arrive with the diagnosis graph; until then say so instead of ignoring it."""
    chosen = model or os.environ.get("GAZE_MODEL")
    if chosen:
        raise GazeInputError(
            f"model {chosen!r} requested, but this version of gaze has no model backbones yet; "
            "unset GAZE_MODEL / drop --model to get the pixel-evidence report"
        )


def print_json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
