"""Graph state: what goes in, what nodes share (with reducers where parallel nodes write), and
what comes out. Everything is plain JSON data so any checkpointer can store it."""

from __future__ import annotations

import operator
from typing import Annotated, Any, NotRequired, TypedDict

from gaze.models.caller import CallRecord


class InputState(TypedDict):
    """What a caller provides."""

    video: str
    instruction: str
    initial_frame: NotRequired[str | None]
    clip_id: NotRequired[str | None]


class OutputState(TypedDict):
    """What a run returns: the report as JSON data (``gaze.schema.Report``)."""

    report: dict[str, Any]


class State(InputState, total=False):
    """Everything nodes share during a run."""

    started_at: float
    clip: dict[str, Any]
    windows: list[dict[str, Any]]
    decode_flags: list[str]
    pixel_events: list[dict[str, Any]]
    task_memory: dict[str, Any] | None
    scene_memory: dict[str, Any] | None
    observations: Annotated[list[dict[str, Any]], operator.add]
    segments: list[dict[str, Any]]
    routes: list[dict[str, Any]]
    hypotheses: Annotated[list[dict[str, Any]], operator.add]
    rejected: list[dict[str, Any]]
    events: list[dict[str, Any]]
    pa: dict[str, Any] | None
    ia: dict[str, Any] | None
    progress: dict[str, Any] | None
    usage: Annotated[list[CallRecord], operator.add]
    failures: Annotated[list[dict[str, str]], operator.add]
    judge_failures: Annotated[list[dict[str, str]], operator.add]
    report: dict[str, Any]


class ObserveTask(TypedDict):
    """The payload of one observe call (sent with ``Send``)."""

    window: dict[str, Any]
    video: str
    instruction: str
    task_memory: dict[str, Any] | None


class SpecialistTask(TypedDict):
    """The payload of one specialist call: a segment and a routed dimension."""

    segment: dict[str, Any]
    dimension: str
    video: str
    instruction: str
    clip_end_s: float
    task_memory: dict[str, Any] | None
    scene_memory: dict[str, Any] | None
    observations: str
    pixel_hints: str
