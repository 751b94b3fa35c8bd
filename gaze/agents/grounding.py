"""Task and scene grounding: what the instruction asks, and what the initial scene holds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gaze.agents.common import frame_parts
from gaze.models.caller import Caller
from gaze.models.protocol import Message
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


async def ground_task(
    caller: Caller, instruction: str, initial: tuple[float, bytes], max_retries: int
) -> Structured[TaskMemory]:
    prompt = load_prompt("ground_task")
    messages = [
        Message.text("system", prompt.render(instruction=instruction)),
        frame_parts([initial], "Initial scene:"),
    ]
    return await ask(caller, "grounding", messages, TaskMemory, max_retries=max_retries)


async def ground_scene(
    caller: Caller, instruction: str, initial: tuple[float, bytes], max_retries: int
) -> Structured[SceneMemory]:
    prompt = load_prompt("ground_scene")
    messages = [
        Message.text("system", prompt.render(instruction=instruction)),
        frame_parts([initial], "Initial scene:"),
    ]
    return await ask(caller, "grounding", messages, SceneMemory, max_retries=max_retries)
