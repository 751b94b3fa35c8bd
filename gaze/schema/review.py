"""What a person answers when a run pauses for review (LangGraph Studio, ``review`` on): a
decision per event shown, and the events the method missed."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

REJECT_REASONS = ("not visible", "wrong type", "wrong span", "duplicate")
"""The reasons a reviewer picks from (the review tool's short list)."""


class EventFields(BaseModel):
    """Fields of an event a reviewer sets; those left out keep the method's values."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    dimension: str | None = None
    """Primary dimension (codebook)."""
    type: str | None = None
    """Failure type; must belong to the dimension."""
    start_s: float | None = None
    """Start of the span, seconds."""
    end_s: float | None = None
    """End of the span, seconds."""
    severity: float | None = Field(default=None, ge=1, le=5)
    """1 cosmetic .. 5 catastrophic (the codebook's rubric)."""
    description: str | None = None
    """What the reviewer saw."""


class Decision(BaseModel):
    """The reviewer's word on one event shown (by its index in the list shown)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    index: int = Field(ge=0)
    """Which event: its position in the list the pause showed."""
    reason: Literal["not visible", "wrong type", "wrong span", "duplicate"] | None = None
    """Why it is rejected (required for a rejection)."""
    decision: Literal["accept", "reject", "edit"]
    """Keep it as it is, drop it (with a reason), or keep it with the fields in ``edit``."""
    edit: EventFields | None = None
    """The fields an edit changes."""


class ReviewAnswer(BaseModel):
    """The resume value of a review pause. Events no decision names are kept unreviewed."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    decisions: list[Decision] = Field(default_factory=list)
    """One decision per event reviewed."""
    added: list[EventFields] = Field(default_factory=list)
    """Events the method missed (every field but ``description`` required)."""
