"""Task and scene grounding: what the instruction asks, and what the initial scene holds."""

from __future__ import annotations

from typing import Any, Literal

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


class Grounding(BaseModel):
    """Both memories from one call (a run that wants both asks once)."""

    model_config = ConfigDict(extra="forbid")
    task: TaskMemory
    """The objective and its ordered subtasks."""
    scene: SceneMemory
    """The initial scene as later agents need it."""


GroundingKind = Literal["task", "scene", "both"]

MEMORIES: dict[GroundingKind, tuple[str, type[TaskMemory | SceneMemory | Grounding]]] = {
    "task": ("ground_task", TaskMemory),
    "scene": ("ground_scene", SceneMemory),
    "both": ("ground", Grounding),
}
"""What a grounding call gives -> (prompt id, output model)."""


def memory_of(value: BaseModel | None, kind: Literal["task", "scene"]) -> BaseModel | None:
    """The ``kind`` memory in a grounding call's answer (None: not in it, or no answer)."""
    if isinstance(value, Grounding):
        return value.task if kind == "task" else value.scene
    return value if isinstance(value, TaskMemory if kind == "task" else SceneMemory) else None


async def ground(
    caller: Caller,
    kind: GroundingKind,
    instruction: str,
    initial: tuple[float, bytes],
    max_retries: int,
) -> Structured[Any]:
    """Task memory, scene memory or both, from the instruction and the initial scene image."""
    prompt_id, output = MEMORIES[kind]
    messages = frames_then_task([initial], load_prompt(prompt_id).render(instruction=instruction))
    label = "task and scene" if kind == "both" else kind
    return await ask(caller, "grounding", messages, output, max_retries=max_retries, label=label)
