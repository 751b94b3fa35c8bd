"""What a diagnosis is asked about: the clip, the instruction and the initial scene."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from gaze.schema.input_rules import check_instruction, clip_fields, default_clip_id

__all__ = ["ClipInput", "check_instruction", "clip_input", "default_clip_id"]


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


def clip_input(
    video: str | Path,
    instruction: str,
    initial_frame: str | Path | None = None,
    clip_id: str | None = None,
) -> ClipInput:
    """A caller's arguments as a ``ClipInput``; a bad instruction is a ``GazeInputError``."""
    return ClipInput(**clip_fields(video, instruction, initial_frame, clip_id))
