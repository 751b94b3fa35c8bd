"""The observer: what happens in each window it is shown (one, or the pair a two-window segment
examines), per subtask, without judging yet."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from gaze.agents.common import VideoCut, as_text, frames_then_task, span_text
from gaze.models.caller import Caller
from gaze.models.structured import Structured, ask, extract_json
from gaze.prompts import load_prompt
from gaze.schema.records import TaskMemoryRecord, WindowRef

Status = Literal["not_started", "in_progress", "completed", "failed", "not_visible"]
ACTIVE: frozenset[str] = frozenset({"in_progress", "completed", "failed"})


class SubtaskStatus(BaseModel):
    """A subtask's state in the window."""

    model_config = ConfigDict(extra="forbid")
    subtask_id: str
    status: Status
    times_s: list[float]


class Notable(BaseModel):
    """Something odd or hard to see, with its time."""

    model_config = ConfigDict(extra="forbid")
    time_s: float
    what: str


class WindowObservation(BaseModel):
    """The observer's account of one window."""

    model_config = ConfigDict(extra="forbid")
    summary: str
    subtask_status: list[SubtaskStatus]
    notable: list[Notable]


@cache
def observations_model(count: int) -> type[BaseModel]:
    """``{"windows": [WindowObservation, ...]}`` with exactly ``count`` entries, in time order."""
    windows: Any = list[WindowObservation]
    return create_model(
        "WindowObservations",
        __config__=ConfigDict(extra="forbid"),
        windows=(windows, Field(min_length=count, max_length=count)),
    )


def read_observations(data: Any, count: int) -> BaseModel:
    """The answer for ``count`` windows; a lone window's account given without the list
    (``{"summary": ...}``) is put in it."""
    if isinstance(data, dict) and count == 1 and "summary" in data and "windows" not in data:
        data = {"windows": [data]}
    return observations_model(count).model_validate(data)


def windows_text(windows: Sequence[WindowRef]) -> str:
    """``window 0 (0.00-4.00 s) and window 1 (4.00-8.00 s)``."""
    return " and ".join(
        f"window {w['index']} ({span_text(w['start_s'], w['end_s'])})" for w in windows
    )


async def observe_windows(
    caller: Caller,
    instruction: str,
    windows: Sequence[WindowRef],
    frames: Sequence[tuple[float, bytes]],
    task_memory: TaskMemoryRecord | None,
    max_retries: int,
    video_windows: VideoCut | None = None,
) -> Structured[Any]:
    """The observer's account of each of ``windows`` (consecutive; ``frames`` are theirs, in
    time order): one call, one entry per window in its answer. ``video_windows``: frames go
    as one video per window (``frames_then_task``)."""
    prompt = load_prompt("observer")
    where = windows_text(windows)
    text = prompt.render(instruction=instruction, windows=where, task_memory=as_text(task_memory))
    messages = frames_then_task(frames, text, video_windows)
    count = len(windows)
    return await ask(
        caller,
        "observer",
        messages,
        observations_model(count),
        max_retries=max_retries,
        parse=lambda reply: read_observations(extract_json(reply), count),
        label=where,
    )
