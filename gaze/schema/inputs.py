"""What a diagnosis is asked about: the clip, the instruction and the initial scene."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator


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
