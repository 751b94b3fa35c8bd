"""The rules a diagnosis's input follows, apart from its model (``gaze.schema.inputs``).

``gaze diagnose`` and ``gaze.diagnose`` check their input with these and start the clip without
building that model: the first pydantic model of a process that reads its field docstrings
costs 0.02-0.03 s (pydantic reads them from the source file, and ``inspect`` first maps every
loaded module to its file), which the clip's first request waited for. The report's models pay
it later, while the first replies are awaited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gaze.errors import GazeInputError


def check_instruction(text: str) -> str:
    """An instruction must be non-empty, valid UTF-8 text (shared by CLI, API and manifests)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("instruction is not valid UTF-8 text") from None
    if not text.strip():
        raise ValueError("instruction is empty")
    if "\x00" in text:
        raise ValueError("instruction contains a NUL character")
    return text.strip()


def default_clip_id(video: str | Path) -> str:
    """A clip's id when none is given: the file name without its suffix (``pick.mp4``:
    ``pick``)."""
    return Path(video).stem


def clip_fields(
    video: str | Path,
    instruction: str,
    initial_frame: str | Path | None = None,
    clip_id: str | None = None,
) -> dict[str, Any]:
    """A caller's arguments as the fields of a ``ClipInput``, which are also a graph run's
    input; a bad instruction is a ``GazeInputError``."""
    try:
        text = check_instruction(instruction)
    except ValueError as exc:
        raise GazeInputError(f"instruction: {exc}") from None
    return {
        "clip_id": clip_id or default_clip_id(video),
        "video": str(video),
        "instruction": text,
        "initial_frame": str(initial_frame) if initial_frame else None,
    }
