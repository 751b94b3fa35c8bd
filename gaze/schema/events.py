"""Failure events (DESIGN section 5): the unit of every report, prediction and reference."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gaze.schema.codebook import load_codebook

MAX_TIME_S = 1e6
"""No clip is longer than this (11.6 days): a larger time is a broken input, not a span."""


class EvidenceRegion(BaseModel):
    """Where one frame shows the evidence: a box in that frame, so a reader can check by eye."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)

    t_s: float = Field(ge=0, le=MAX_TIME_S)
    """Time of the frame the box is drawn on, seconds from the first frame."""
    box: tuple[float, float, float, float]
    """``(x0, y0, x1, y1)`` as fractions of the frame's width and height, ``0 <= x0 <= x1 <= 1``."""
    label: str = ""
    """What the box shows in that frame (``before``, ``after``, ``track 3``...)."""

    @model_validator(mode="after")
    def _check_box(self) -> EvidenceRegion:
        x0, y0, x1, y1 = self.box
        if not (0 <= x0 <= x1 <= 1 and 0 <= y0 <= y1 <= 1):
            raise ValueError(f"box {self.box} is not (x0, y0, x1, y1) within [0, 1]")
        return self


class ScoringEvent(BaseModel):
    """A failure event as a reference or a prediction holds it for scoring. A peer's event may
    lack what gaze's own events always carry: GLiDE's bugs have no type, dimension or severity,
    and a bug may span several intervals. Nothing is invented for what a peer leaves out: the
    metrics that need it leave such events out (docs/compat.md)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)

    dimension: str | None = None
    """Primary dimension (matching uses this one); None when the source names none."""
    type: str | None = None
    """Failure type from the codebook; must belong to ``dimension``; None when the source names
    none (a dimension may still be named)."""
    start_s: float = Field(ge=0, le=MAX_TIME_S)
    """Start of the span, in seconds from the first frame."""
    end_s: float = Field(ge=0, le=MAX_TIME_S)
    """End of the span, in seconds; ``start_s <= end_s`` (equal for an instant)."""
    severity: float | None = Field(default=None, ge=1, le=5)
    """1 cosmetic .. 5 catastrophic (codebook rubric); references may hold averaged fractions;
    None when the source grades none (severity metrics leave the event out)."""
    description: str = ""
    """What happens, in words a reader can check against the frames."""
    evidence: list[str] = Field(default_factory=list)
    """What supports the event: frames, signals and their values, observations."""
    confidence: float | None = Field(default=None, ge=0, le=1)
    """Predictor's confidence in [0, 1]; predictions only (None on references)."""
    dimensions: list[str] = Field(default_factory=list)
    """All implicated dimensions, primary first; filled with the primary when empty."""
    regions: list[EvidenceRegion] = Field(default_factory=list)
    """Frames and boxes that show the event (pixel events name the region that changed)."""
    spans: list[tuple[float, float]] = Field(default_factory=list)
    """The intervals of an event that spans several, sorted, within ``[start_s, end_s]`` with
    the first starting at ``start_s`` and the last ending at ``end_s``; empty for one span."""

    @model_validator(mode="after")
    def _check_against_codebook(self) -> ScoringEvent:
        book = load_codebook().codebook
        names = [d.name for d in book.dimensions]
        if self.type is not None:
            try:
                owner = book.dimension_of(self.type)
            except KeyError:
                raise ValueError(f"unknown failure type {self.type!r}") from None
        if self.dimension is not None and self.dimension not in names:
            raise ValueError(f"unknown dimension {self.dimension!r}")
        if self.type is not None and owner != self.dimension:
            raise ValueError(f"type {self.type!r} belongs to {owner!r}, not {self.dimension!r}")
        if self.start_s > self.end_s:
            raise ValueError(f"start_s {self.start_s} is after end_s {self.end_s}")
        self._check_spans()
        unknown = [d for d in self.dimensions if d not in names]
        if unknown:
            raise ValueError(f"unknown dimensions {unknown}")
        if self.dimension is None:
            return self
        if not self.dimensions:
            self.dimensions = [self.dimension]
        elif self.dimension not in self.dimensions:
            self.dimensions = [self.dimension, *self.dimensions]
        return self

    def _check_spans(self) -> None:
        if not self.spans:
            return
        if any(s > e for s, e in self.spans) or self.spans != sorted(self.spans):
            raise ValueError(f"spans {self.spans} are not sorted [start, end] pairs")
        if self.spans[0][0] != self.start_s or max(e for _, e in self.spans) != self.end_s:
            raise ValueError(f"spans {self.spans} do not run from start_s to end_s")

    @property
    def kind(self) -> str:
        """What to call the event in a listing: its type, or ``untyped`` when it has none."""
        return self.type or "untyped"

    @property
    def severity_shown(self) -> str:
        """The severity as a listing shows it (``—`` when ungraded)."""
        return "—" if self.severity is None else f"{self.severity:g}"

    def intervals(self) -> list[tuple[float, float]]:
        """The event's intervals: ``spans``, or the one ``[start_s, end_s]``."""
        return list(self.spans) or [(self.start_s, self.end_s)]


class Event(ScoringEvent):
    """One failure event as gaze reports it: what failed, when, how badly, and what shows it."""

    dimension: str
    """Primary dimension (matching uses this one)."""
    type: str
    """Failure type from the codebook; must belong to ``dimension``."""
    severity: float = Field(ge=1, le=5)
    """1 cosmetic .. 5 catastrophic (codebook rubric); references may hold averaged fractions."""
