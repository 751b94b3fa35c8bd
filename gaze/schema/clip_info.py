"""What decoding found out about a clip: the report's ``clip`` section.

A module of its own, with pydantic alone: whoever reads a decoded clip's ``info`` makes one
from the plain values decoding found (``gaze.video.clip.DecodedClip``), with neither the
codebook nor the report's other models. A decoding child sends those values and loads no
pydantic before its first frame (0.1 s of its start, which a long clip's last observer request
waited for).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ClipInfo(BaseModel):
    """Metadata of the analysed video, as found by decoding (not only as the container claims)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    path: str
    """The file that was opened."""
    fps: float
    """Frames per second of the video stream."""
    frame_count: int
    """Frames actually decoded."""
    duration_s: float
    """Duration of the video stream: frame_count / fps."""
    width: int
    """Frame width in pixels."""
    height: int
    """Frame height in pixels."""
    codec: str
    """Codec tag reported by the decoder (may be empty)."""
    container_frame_count: int | None = None
    """Frame count the container claims (None when it omits it)."""
    warnings: list[str] = Field(default_factory=list)
    """Problems found while opening: lying containers, caps applied, downscaling."""
