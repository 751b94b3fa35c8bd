"""The specialist node: the failure hypotheses of one segment's routed dimensions, in one call
(the graph sends one task per routed segment; ``gaze.graph.critic_node`` rules on what they
find)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from gaze.agents import specialist
from gaze.graph.frame_budget import held_frames
from gaze.graph.services import services
from gaze.graph.state import Failure, Hypothesis, SpecialistTask, Update, failure
from gaze.settings.context import GazeContext


async def run_specialist(task: SpecialistTask, runtime: Runtime[GazeContext]) -> Update:
    """The routed dimensions' specialist on one segment: hypotheses with spans and evidence."""
    svc = await services(runtime)
    ctx = svc.settings(runtime.context)
    clip = await svc.clips.decoded(task["video"])
    segment = task["segment"]
    dimensions = task["dimensions"]
    held = held_frames(svc.frames_gate, clip, segment["windows"], ctx.max_frames_per_call)
    async with held as frames:
        result = await specialist.examine(
            svc.caller,
            dimensions=dimensions,
            instruction=task["instruction"],
            segment=segment,
            frames=frames,
            task_memory=task["task_memory"],
            scene_memory=task["scene_memory"],
            observations=task["observations"],
            pixel_hints=task["pixel_hints"],
            max_retries=ctx.max_retries,
            video_windows=ctx.video_windows(),
        )
    wheres = [f"{segment['id']}/{d}" for d in dimensions]
    hypotheses: list[Hypothesis] = []
    failures = failure("specialist", result, "+".join(wheres))
    if result.value is not None:
        for dimension in dimensions:
            found, problems = specialist.to_hypotheses(
                getattr(result.value, dimension), dimension, segment, task["clip_end_s"]
            )
            hypotheses += found
            where = f"{segment['id']}/{dimension}"
            failures += [Failure(role="specialist", where=where, detail=p) for p in problems]
    return {
        "hypotheses": hypotheses,
        "usage": result.records,
        "prompts": ["specialist"],
        "failures": failures,
        "not_assessed": [] if result.value is not None else wheres,
    }
