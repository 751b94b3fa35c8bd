"""The observer: what happens in one window, per subtask, without judging yet."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from gaze.agents.common import as_text, frames_then_task, span_text
from gaze.models.caller import Caller
from gaze.models.structured import Structured, ask
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


async def observe_window(
    caller: Caller,
    instruction: str,
    window: WindowRef,
    frames: Sequence[tuple[float, bytes]],
    task_memory: TaskMemoryRecord | None,
    max_retries: int,
    context: WindowRef | None = None,
) -> Structured[WindowObservation]:
    """The observer's account of ``window``; ``frames`` begin with those of ``context`` (the
    window before it, shown only as context) when one is given."""
    prompt = load_prompt("observer")
    span = span_text(window["start_s"], window["end_s"])
    where = f"window {window['index']} ({span})"
    if context is not None:
        where += (
            f"; the frames before {window['start_s']:.2f} s are window {context['index']} "
            f"({span_text(context['start_s'], context['end_s'])}), shown first only as context: "
            f"describe and time what happens from {window['start_s']:.2f} s on"
        )
    text = prompt.render(instruction=instruction, window=where, task_memory=as_text(task_memory))
    messages = frames_then_task(frames, text)
    return await ask(
        caller,
        "observer",
        messages,
        WindowObservation,
        max_retries=max_retries,
        label=f"window {window['index']} ({span})",
    )
