"""The JSON records the diagnosis graph passes between its nodes (windows, observations,
segments, routes, hypotheses, verdicts, failures, events). Plain data, so any checkpointer stores
them; each has its own type, so Studio and mypy can tell a window from a hypothesis.

``typing_extensions.TypedDict`` throughout: pydantic (and so the LangGraph server's schema
endpoints) cannot read ``typing.TypedDict`` before Python 3.12.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeVar, cast

from pydantic import BaseModel
from typing_extensions import TypedDict

from gaze.schema.dimensions import DimensionName

SubtaskState = Literal["not_started", "in_progress", "completed", "failed", "not_visible"]


class WindowRef(TypedDict):
    """One sampling window of the decoded clip (its frames stay in the run's clip store)."""

    index: int
    start_s: float
    end_s: float
    frames: int


class SubtaskStatusRecord(TypedDict):
    subtask_id: str
    status: SubtaskState
    times_s: list[float]


class NotableRecord(TypedDict):
    time_s: float
    what: str


class Observation(TypedDict):
    """The observer's account of one window (empty when the call failed or was not made)."""

    window: int
    start_s: float
    end_s: float
    summary: str
    subtask_status: list[SubtaskStatusRecord]
    notable: list[NotableRecord]


class Segment(TypedDict):
    """A span of windows examined together (a subtask's span, or windows no subtask claims)."""

    id: str
    subtask_id: str | None
    start_s: float
    end_s: float
    windows: list[int]


class Route(TypedDict):
    """The dimensions a segment's specialists examine, with the router's relevance scores."""

    segment_id: str
    dimensions: list[DimensionName]
    scores: dict[str, float]


class RegionRecord(TypedDict):
    """Where one frame shows the evidence (``gaze.schema.events.EvidenceRegion`` as JSON)."""

    t_s: float
    box: tuple[float, float, float, float]
    label: str


class Hypothesis(TypedDict):
    """A candidate failure event, from a specialist or from pixel evidence."""

    id: str
    segment_id: str
    dimension: DimensionName
    type: str
    start_s: float
    end_s: float
    explanation: str
    evidence: list[str]
    objects: list[str]
    severity: int
    confidence: float
    source: NotRequired[Literal["specialist", "pixels", "review"]]
    regions: NotRequired[list[RegionRecord]]
    """Frames and boxes that show it (pixel evidence names the region that changed)."""
    spans: NotRequired[list[tuple[float, float]]]
    """Its intervals when it has several within [start_s, end_s] (``Event.spans``)."""


class CheckedHypothesis(Hypothesis):
    """A hypothesis after the critic: accepted (with the critic's reason), rejected, or kept
    unverified (the critic gave it no verdict)."""

    reason: str


class Failure(TypedDict):
    """A call that never produced a usable reply: which role, where, and why."""

    role: str
    where: str
    detail: str


class EventRecord(TypedDict):
    """A report event as JSON (``gaze.schema.events.Event``)."""

    dimension: str
    type: str
    start_s: float
    end_s: float
    severity: float
    description: str
    evidence: list[str]
    confidence: float | None
    dimensions: list[str]
    regions: list[RegionRecord]
    spans: list[tuple[float, float]]


class SubtaskRecord(TypedDict):
    """One ordered step of the task (``gaze.agents.grounding.Subtask`` as JSON)."""

    id: str
    description: str
    objects: list[str]
    target_state: str
    expected_outcome: str
    completion_criterion: str


class TaskMemoryRecord(TypedDict):
    """The objective and its ordered subtasks."""

    objective: str
    subtasks: list[SubtaskRecord]


class SceneObjectRecord(TypedDict):
    name: str
    attributes: str
    location: str


class SceneMemoryRecord(TypedDict):
    """The initial scene as later agents need it."""

    workspace: str
    objects: list[SceneObjectRecord]
    robot_parts: list[str]
    relations: list[str]
    uncertainty: list[str]


class JudgeScoreRecord(TypedDict):
    """A PA or IA score (``gaze.schema.report.JudgeScore`` as JSON)."""

    score: int
    rationale: str
    subscores: dict[str, int]


class ProgressRecord(TypedDict):
    """A progress curve and its OPD metrics (``gaze.schema.report.ProgressCurve`` as JSON)."""

    times_s: list[float]
    raw: list[float]
    processed: list[float]
    metrics: dict[str, float | None]


class ClipRecord(TypedDict):
    """The decoded clip's metadata (``gaze.schema.clip_info.ClipInfo`` as JSON)."""

    path: str
    fps: float
    frame_count: int
    duration_s: float
    width: int
    height: int
    codec: str
    container_frame_count: int | None
    warnings: list[str]


MIRRORS: dict[str, str] = {
    "RegionRecord": "gaze.schema.events.EvidenceRegion",
    "EventRecord": "gaze.schema.events.Event",
    "SubtaskRecord": "gaze.agents.grounding.Subtask",
    "TaskMemoryRecord": "gaze.agents.grounding.TaskMemory",
    "SceneObjectRecord": "gaze.agents.grounding.SceneObject",
    "SceneMemoryRecord": "gaze.agents.grounding.SceneMemory",
    "JudgeScoreRecord": "gaze.schema.report.JudgeScore",
    "ProgressRecord": "gaze.schema.report.ProgressCurve",
    "ClipRecord": "gaze.schema.clip_info.ClipInfo",
}
"""Each record that is a pydantic model as JSON, and that model: their fields are one list
(``tests/schema/test_records.py`` fails when they differ; ``record_of`` checks every dump)."""

R = TypeVar("R")


def record_of(model: BaseModel, record: type[R]) -> R:
    """``model`` as the graph's JSON record ``record``, its keys checked against the record's
    (a field added to one side only fails here, not three nodes later)."""
    data: dict[str, Any] = model.model_dump(mode="json")
    keys: Any = record
    required, optional = keys.__required_keys__, keys.__optional_keys__
    missing, unknown = required - data.keys(), data.keys() - required - optional
    if missing or unknown:
        raise TypeError(
            f"{type(model).__name__} is not a {keys.__name__}: missing {sorted(missing)}, "
            f"unknown {sorted(unknown)}"
        )
    return cast(R, data)
