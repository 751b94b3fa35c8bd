"""What a diagnosis is asked about: the clip, the instruction and the initial scene."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

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


class ClipInput(BaseModel):
    """The input of one diagnosis."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    clip_id: str
    """Identifier used in reports and benchmark files (default: the file name without suffix)."""
    video: str
    """Path of the video file."""
    instruction: str
    """The task instruction the rollout was generated or executed for."""
    initial_frame: str | None = None
    """Path of an image showing the initial scene; None means the clip's first frame."""

    @field_validator("instruction")
    @classmethod
    def _valid_instruction(cls, value: str) -> str:
        return check_instruction(value)


def default_clip_id(video: str | Path) -> str:
    """A clip's id when none is given: the file name without its suffix (``pick.mp4``:
    ``pick``)."""
    return Path(video).stem


def clip_input(
    video: str | Path,
    instruction: str,
    initial_frame: str | Path | None = None,
    clip_id: str | None = None,
) -> ClipInput:
    """A caller's arguments as a ``ClipInput``; a bad instruction is a ``GazeInputError``."""
    try:
        text = check_instruction(instruction)
    except ValueError as exc:
        raise GazeInputError(f"instruction: {exc}") from None
    return ClipInput(
        clip_id=clip_id or default_clip_id(video),
        video=str(video),
        instruction=text,
        initial_frame=str(initial_frame) if initial_frame else None,
    )
