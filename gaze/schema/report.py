"""The diagnostic report (DESIGN section 5) and its run manifest.

Its JSON Schema is exported to ``report.schema.json`` beside this file
(``python -m gaze.schema.export``); a test fails when the export is stale.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gaze.schema.clip_info import ClipInfo
from gaze.schema.events import Event

REPORT_FORMAT = "2"
"""Version of the report's JSON layout (bumped when a field changes meaning or goes away)."""

KNOWN_FLAGS = {
    "parse_failed": "no diagnosis call gave output that parsed after all retries; events are empty",
    "partial": "some calls never gave usable output: their windows or segment x dimension pairs "
    "were not assessed (listed in assessment.incomplete); every other event is kept",
    "judge_failed": "a PA/IA or progress judge gave no usable output",
    "pixel_evidence_only": "no model configured: only what pixel signals show was assessed",
    "duration_capped": "the clip was longer than the analysis cap; only its start was analysed",
    "frame_count_mismatch": "the container's frame count or duration disagrees with decoding",
    "downscaled": "the clip's resolution was above the analysis cap and was downscaled",
}


class JudgeScore(BaseModel):
    """A 1-5 score with the judge's reasoning (PA or IA)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    score: int = Field(ge=1, le=5)
    """Integer score, 1 worst .. 5 best."""
    rationale: str = ""
    """The reasoning given before the score."""
    subscores: dict[str, int] = Field(default_factory=dict)
    """Named 0-2 sub-scores (DESIGN section 7)."""


class ProgressCurve(BaseModel):
    """A task-progress curve and the OPD metrics derived from it."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    times_s: list[float]
    """Time of each curve point, seconds."""
    raw: list[float]
    """Values as the judge returned them."""
    processed: list[float]
    """Unified, de-outliered, smoothed values in [0, 1]."""
    metrics: dict[str, float | None] = Field(default_factory=dict)
    """OPD metrics (None where the rollout is not eligible)."""


class PixelSignals(BaseModel):
    """Per-frame pixel-evidence signals, on the analysis frames."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    analysis_fps: float
    """Rate of the analysed frames (native rate, subsampled to a cap)."""
    times_s: list[float]
    """True timestamp of every analysed frame."""
    series: dict[str, list[float]]
    """Signal name -> one value per analysed frame (rounded)."""
    thresholds: dict[str, float]
    """The named thresholds that decided where signals fire."""


class Assessment(BaseModel):
    """What the report covers, so that an empty report is read correctly."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    mode: Literal["pixel_evidence", "graph", "baseline"]
    """``pixel_evidence``: no model, signals only; ``graph``: the full diagnosis graph;
    ``baseline``: one of the control methods of ``gaze bench run``."""
    assessed: list[str]
    """Dimensions that were looked at."""
    not_assessed: list[str]
    """Dimensions that were not looked at (and so cannot be called clean)."""
    incomplete: list[str] = Field(default_factory=list)
    """Parts not assessed because their calls never gave usable output: ``window N``,
    ``segK/DIMENSION``, ``segK/critic`` (report flagged ``partial``)."""
    types_checked: list[str] = Field(default_factory=list)
    """Failure types the method can detect at all (empty: every type of the assessed dimensions)."""
    note: str
    """One sentence for a reader on what an empty event list means here."""


class PromptRecord(BaseModel):
    """A prompt file used in the run."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    id: str
    """Prompt id (the role it serves)."""
    version: str
    """Prompt version string."""
    hash: str
    """sha256 of the prompt's content."""


class RunManifest(BaseModel):
    """Everything needed to know how a report was made, and what it cost."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    gaze_version: str
    """Version of gaze that made the report."""
    codebook_version: str
    """Codebook version used."""
    codebook_hash: str
    """Content hash of the codebook used."""
    prompts: list[PromptRecord] = Field(default_factory=list)
    """Prompt ids, versions and hashes used."""
    models: dict[str, str] = Field(default_factory=dict)
    """Role -> ``provider:model`` (empty when no model was configured)."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Run settings (window, frames, thresholds, switches)."""
    served_images: int | None = None
    """The most images per request the served model takes, when its start-up check found fewer
    than the settings asked for and this clip's segments were shortened to fit (``settings``
    holds the layout used: ``max_segment_windows``, ``max_frames_per_call``); None when they
    were not."""
    calls: dict[str, int] = Field(default_factory=dict)
    """Role -> number of requests sent to a backbone (every attempt, failed ones included)."""
    failed_requests: int = 0
    """Requests that got no usable reply (transport errors, refusals, invalid output)."""
    input_tokens: int = 0
    """Input tokens, where providers report them."""
    output_tokens: int = 0
    """Output tokens, where providers report them."""
    images: int = 0
    """Frames sent to backbones (as images, or in videos)."""
    estimated_input_tokens: int = 0
    """Input tokens of the requests sent, by each provider's published image-token rule."""
    cached_input_tokens: int = 0
    """Input tokens the servers reported answering from their prompt caches."""
    cache_hits: int = 0
    """Calls answered from the response cache."""
    cost_usd: float = 0.0
    """Estimated cost in US dollars (0 when unknown or free)."""
    wall_time_s: float = 0.0
    """Wall-clock time of the whole diagnosis."""
    created_at: str = ""
    """UTC time the report was written, ISO 8601."""


def run_manifest(
    settings: dict[str, Any],
    wall_time_s: float,
    *,
    prompts: list[PromptRecord] | None = None,
    models: dict[str, str] | None = None,
    usage: dict[str, Any] | None = None,
    served_images: int | None = None,
) -> RunManifest:
    """The one way a report's manifest is made: this code's versions, the codebook's hash and
    the time, with what the method used (prompts, models, settings) and its calls' ``usage``
    (``gaze.models.caller.usage_totals``)."""
    from gaze import __version__
    from gaze.schema.codebook import load_codebook

    book = load_codebook()
    return RunManifest(
        gaze_version=__version__,
        codebook_version=book.version,
        codebook_hash=book.hash,
        prompts=prompts or [],
        models=models or {},
        settings=settings,
        served_images=served_images,
        **(usage or {}),
        wall_time_s=round(wall_time_s, 3),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


class RejectedHypothesis(BaseModel):
    """A hypothesis the critic turned down, kept so a reader can audit the critic."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    dimension: str
    """Dimension of the rejected hypothesis."""
    type: str
    """Failure type it proposed."""
    start_s: float
    """Start of its span, seconds."""
    end_s: float
    """End of its span, seconds."""
    confidence: float
    """The critic's confidence that the failure is real."""
    reason: str
    """Why it was rejected."""
    source: Literal["specialist", "pixels", "review"] = "specialist"
    """Who proposed it: a dimension specialist or pixel evidence; ``review``: an event a person
    rejected in review (the reason says why)."""


class Report(BaseModel):
    """A structured diagnostic report for one clip."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    format: str = REPORT_FORMAT
    """Version of this JSON layout (``REPORT_FORMAT``); a gaze that reads an older layout
    refuses a newer file instead of misreading it."""

    @field_validator("format")
    @classmethod
    def _readable(cls, value: str) -> str:
        if not value.isdigit() or int(value) > int(REPORT_FORMAT):
            raise ValueError(
                f"report format {value!r} is newer than this gaze reads ({REPORT_FORMAT} and "
                "older): upgrade gaze"
            )
        return value

    clip_id: str
    """Identifier of the clip."""
    instruction: str
    """The task instruction diagnosed against."""
    initial_frame: str | None = None
    """Image used as the initial scene; None means the clip's first frame."""
    clip: ClipInfo | None = None
    """Metadata of the decoded clip (None if it could not be decoded in a batch run)."""
    events: list[Event] = Field(default_factory=list)
    """Failure events, sorted by start time."""
    flags: list[str] = Field(default_factory=list)
    """Condition flags; see ``KNOWN_FLAGS``."""
    assessment: Assessment
    """Which dimensions this report covers."""
    pa: JudgeScore | None = None
    """Physical adherence score, when the pa_ia judge ran."""
    ia: JudgeScore | None = None
    """Instruction alignment score, when the pa_ia judge ran."""
    progress: ProgressCurve | None = None
    """Task-progress curve and OPD metrics, when the progress judge ran."""
    signals: PixelSignals | None = None
    """Pixel-evidence signals, when computed."""
    rejected: list[RejectedHypothesis] = Field(default_factory=list)
    """Hypotheses the critic rejected (graph mode)."""
    consistency: list[str] = Field(default_factory=list)
    """Cross-checks between judges: where diagnosis, progress curve and PA agree or not."""
    problems: list[str] = Field(default_factory=list)
    """Calls whose output could not be used after all retries (role, where, why)."""
    manifest: RunManifest
    """How the report was made."""
