"""Task and scene grounding: what the instruction asks, and what the initial scene holds."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from gaze.agents.common import frames_then_task
from gaze.models.caller import Caller
from gaze.models.structured import Structured, ask
from gaze.prompts import load_prompt


class Subtask(BaseModel):
    """One ordered step of the task."""

    model_config = ConfigDict(extra="forbid")
    id: str
    description: str
    objects: list[str]
    target_state: str
    expected_outcome: str
    completion_criterion: str


class TaskMemory(BaseModel):
    """The objective and its ordered subtasks."""

    model_config = ConfigDict(extra="forbid")
    objective: str
    subtasks: list[Subtask]


class SceneObject(BaseModel):
    """A task-relevant object of the initial scene."""

    model_config = ConfigDict(extra="forbid")
    name: str
    attributes: str
    location: str


class SceneMemory(BaseModel):
    """The initial scene as later agents need it."""

    model_config = ConfigDict(extra="forbid")
    workspace: str
    objects: list[SceneObject]
    robot_parts: list[str]
    relations: list[str]
    uncertainty: list[str]


MEMORIES: dict[str, tuple[str, type[TaskMemory] | type[SceneMemory]]] = {
    "task": ("ground_task", TaskMemory),
    "scene": ("ground_scene", SceneMemory),
}
"""Memory kind -> (prompt id, output model)."""


async def ground(
    caller: Caller, kind: str, instruction: str, initial: tuple[float, bytes], max_retries: int
) -> Structured[Any]:
    """Task or scene memory from the instruction and the initial scene image."""
    prompt_id, output = MEMORIES[kind]
    messages = frames_then_task([initial], load_prompt(prompt_id).render(instruction=instruction))
    return await ask(caller, "grounding", messages, output, max_retries=max_retries, label=kind)
