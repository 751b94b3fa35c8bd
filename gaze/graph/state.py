"""Graph state: what goes in, what nodes share (with a reducer on every field that parallel nodes
write), and what comes out (``gaze.graph.output_state``). Everything is plain JSON data so any
checkpointer can store it, and every record has its own type so Studio and mypy can tell a
window from a hypothesis.

``typing_extensions.TypedDict`` throughout: pydantic (and so the LangGraph server's schema
endpoints) cannot read ``typing.TypedDict`` before Python 3.12.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired, get_args, get_origin, get_type_hints

from pydantic import ConfigDict, with_config
from typing_extensions import TypedDict

from gaze.models.caller import CallRecord
from gaze.models.structured import Structured
from gaze.schema.dimensions import DimensionName
from gaze.schema.records import (
    CheckedHypothesis,
    ClipRecord,
    EventRecord,
    Failure,
    Hypothesis,
    JudgeScoreRecord,
    Observation,
    ProgressRecord,
    Route,
    SceneMemoryRecord,
    Segment,
    TaskMemoryRecord,
    WindowRef,
)

__all__ = [
    "TaskMemoryRecord",
    "SceneMemoryRecord",
    "ProgressRecord",
    "JudgeScoreRecord",
    "ClipRecord",
    "EventRecord",
    "Failure",
    "Hypothesis",
    "InputState",
    "Observation",
    "Route",
    "Segment",
    "SpecialistTask",
    "State",
    "Update",
    "CheckedHypothesis",
    "WindowRef",
    "fresh_clip_state",
    "START_RUN",
]


@with_config(ConfigDict(use_attribute_docstrings=True))  # Studio shows each field's text
class InputState(TypedDict):
    """What a caller provides."""

    video: str
    """Path of the clip (mp4, webm, avi, mkv, gif)."""
    instruction: str
    """The task instruction the clip should carry out."""
    initial_frame: NotRequired[str | None]
    """Image of the initial scene (default: the clip's first frame)."""
    clip_id: NotRequired[str | None]
    """Identifier used in the report (default: the file name)."""


class Update(TypedDict, total=False):
    """What nodes write: every field a node may return (a node returns only its own)."""

    started_at: float
    clip: ClipRecord
    windows: list[WindowRef]
    decode_flags: list[str]
    pixel_events: list[EventRecord]
    task_memory: TaskMemoryRecord | None
    scene_memory: SceneMemoryRecord | None
    observations: Annotated[list[Observation], operator.add]
    segments: list[Segment]
    routes: list[Route]
    hypotheses: Annotated[list[Hypothesis], operator.add]
    rejected: list[CheckedHypothesis]
    events: list[EventRecord]
    pa: JudgeScoreRecord | None
    ia: JudgeScoreRecord | None
    progress: ProgressRecord | None
    usage: Annotated[list[CallRecord], operator.add]
    failures: Annotated[list[Failure], operator.add]
    not_assessed: Annotated[list[str], operator.add]
    """Windows and segment x dimension pairs whose calls never gave usable output."""
    judge_failures: Annotated[list[Failure], operator.add]
    prompts: Annotated[list[str], operator.add]
    """Ids of every prompt a call of this run used (the manifest records their hashes)."""
    report: dict[str, Any]
    """The report as JSON data (``gaze.schema.Report``)."""


class State(InputState, Update):
    """Everything nodes share during a run: the input and every node's writes."""


class SpecialistTask(TypedDict):
    """The payload of one specialist call: a segment and the dimensions routed to it."""

    segment: Segment
    dimensions: list[DimensionName]
    video: str
    instruction: str
    clip_end_s: float
    task_memory: TaskMemoryRecord | None
    scene_memory: SceneMemoryRecord | None
    observations: str
    pixel_hints: str


def failure(role: str, result: Structured[Any], where: str) -> list[Failure]:
    """The failure record of a call that never produced a usable reply (none if it did)."""
    if result.value is not None:
        return []
    return [Failure(role=role, where=where, detail=result.error)]


START_RUN = "start_run"
"""The node that writes ``fresh_clip_state()`` first in every run (internal: progress hooks are
not shown its update)."""


def fresh_clip_state() -> dict[str, Any]:
    """The update that empties every field a run writes (``Update``), so a run on a thread that
    kept an earlier run's state starts from nothing: reducer fields are overwritten with an
    empty list (bypassing the reducer), other lists emptied, optional fields set to None. The
    rest (the clip record, the start time, the report) every run writes before anything reads
    them. Derived from ``Update`` itself, so a field added there is reset too. The thread's
    checkpoints keep every earlier run."""
    # LangGraph is the largest import of a run: this module is loaded before it (gaze.graph.early)
    from langgraph.types import Overwrite

    out: dict[str, Any] = {}
    for name, hint in get_type_hints(Update, include_extras=True).items():
        if get_origin(hint) is Annotated:
            out[name] = Overwrite([])
        elif get_origin(hint) is list:
            out[name] = []
        elif type(None) in get_args(hint):
            out[name] = None
    return out
