"""Benchmark manifests and predictions (DESIGN section 5)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gaze.schema.events import ScoringEvent


class ProgressInterval(BaseModel):
    """A human label that progress rises (+1) or falls (-1) over a span."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)

    start_s: float = Field(ge=0)
    """Start of the labelled span, seconds."""
    end_s: float = Field(ge=0)
    """End of the labelled span, seconds."""
    label: int
    """+1 rising, -1 falling."""

    @model_validator(mode="after")
    def _check(self) -> ProgressInterval:
        if self.label not in (1, -1):
            raise ValueError("label must be +1 or -1")
        if self.start_s > self.end_s:
            raise ValueError("start_s is after end_s")
        return self


MAX_CLIP_ID = 200


def check_clip_id(value: str) -> str:
    """A clip id names the clip's report file, so it must be a plain file name: no folder
    separator, no leading dot ('..' included), no control character, at most 200 characters."""
    problems = []
    if not value:
        problems.append("is empty")
    if "/" in value or "\\" in value:
        problems.append("contains a folder separator")
    if value.startswith("."):
        problems.append("starts with a dot")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        problems.append("contains a control character")
    if len(value) > MAX_CLIP_ID:
        problems.append(f"is longer than {MAX_CLIP_ID} characters")
    if problems:
        raise ValueError(
            f"clip_id {value[:60]!r} {' and '.join(problems)}; it names the clip's report file"
        )
    return value


class ManifestClip(BaseModel):
    """One line of a benchmark manifest: a clip and its human reference."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)

    clip_id: str = Field(min_length=1)
    """Unique identifier of the clip in the manifest (a plain file name: see check_clip_id)."""

    @field_validator("clip_id")
    @classmethod
    def _plain_clip_id(cls, value: str) -> str:
        return check_clip_id(value)

    video: str
    """Video path, relative to the manifest file."""
    instruction: str = ""
    """Task instruction; empty only in a scoring-only manifest converted from a peer that gives
    none (GLiDE): ``bench run`` needs one on every row."""
    initial_frame: str | None = None
    """Optional initial-scene image, relative to the manifest."""
    condition_id: str = ""
    """Source condition shared by clips from one prompt/scene; bootstrap resamples these groups.
    Empty means the clip id."""
    generator: str = ""
    """Which model (or real robot) produced the clip."""
    fps: float | None = Field(default=None, gt=0)
    """Frame rate used for frame-level IoU."""
    duration_s: float | None = Field(default=None, ge=0)
    """Duration of the clip, seconds."""
    events: list[ScoringEvent] = Field(default_factory=list)
    """Reference events; empty means a clean clip."""
    pa: float | None = None
    """Human physical-adherence score (1-5)."""
    ia: float | None = None
    """Human instruction-alignment score (1-5)."""
    progress_intervals: list[ProgressInterval] = Field(default_factory=list)
    """Rising/falling progress labels."""
    success: bool | None = None
    """Human success label."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Free metadata (embodiment, task family, ...); unknown top-level keys land here."""

    @model_validator(mode="before")
    @classmethod
    def _collect_metadata(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        known = set(cls.model_fields)
        extra = {k: v for k, v in data.items() if k not in known}
        if not extra:
            return data
        merged = {k: v for k, v in data.items() if k in known}
        merged["metadata"] = {**extra, **dict(data.get("metadata") or {})}
        return merged

    @model_validator(mode="after")
    def _defaults(self) -> ManifestClip:
        if not self.condition_id:
            self.condition_id = self.clip_id
        for ev in self.events:
            if self.duration_s is not None and ev.end_s > self.duration_s + 1e-6:
                raise ValueError(
                    f"event {ev.type} ends at {ev.end_s} s, after the clip ({self.duration_s} s)"
                )
        return self


class Prediction(BaseModel):
    """One line of a predictions file."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)

    clip_id: str
    """Clip the prediction is for."""
    events: list[ScoringEvent] = Field(default_factory=list)
    """Predicted events."""
    pa: float | None = None
    """Predicted physical-adherence score."""
    ia: float | None = None
    """Predicted instruction-alignment score."""
    progress: list[Annotated[float, Field(ge=-1000, le=1000)]] | None = None
    """Predicted progress curve, one value per second (0-1 or 0-100)."""
    flags: list[str] = Field(default_factory=list)
    """The report's flags (``parse_failed``, ``partial``, ...): scoring counts flagged clips."""
