"""The diagnosis nodes up to routing. Each reads state and the run context, calls its agent, and
returns only the fields its name promises; call records, prompts used and failures go to
reducer fields. Nothing here blocks the event loop: decoding and the pixel pass run in the
clip's decoding child and image reads in worker threads, through the run's clip store.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langgraph.runtime import Runtime
from pydantic import BaseModel

from gaze.agents import grounding, router
from gaze.graph.early import RouterCall, grounded, pixel_event_records, wants_memory
from gaze.graph.observing import empty_observation, observe_windows, reporting, window_ref
from gaze.graph.segment_texts import router_texts
from gaze.graph.segments import clip_segments
from gaze.graph.services import services
from gaze.graph.state import (
    ClipRecord,
    Route,
    SceneMemoryRecord,
    State,
    TaskMemoryRecord,
    Update,
    failure,
    fresh_clip_state,
)
from gaze.schema.dimensions import DIMENSIONS
from gaze.schema.input_rules import check_instruction
from gaze.schema.records import record_of
from gaze.settings.context import GazeContext, diagnosing


async def start_run(state: State) -> dict[str, Any]:
    """Empty the clip state: LangGraph Studio runs run after run on one thread, and reducer
    fields would otherwise add this run's observations, hypotheses and calls to the last's."""
    return fresh_clip_state()


async def load_clip(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Check the inputs, decode the clip once (frames encoded once), and write its metadata,
    windows and decoding flags."""
    check_instruction(state["instruction"])
    svc = await services(runtime)
    clip = await svc.clips.decoded(state["video"])
    windows = [window_ref(w) for w in clip.windows]
    return {
        "started_at": svc.started_at,
        "clip": record_of(clip.info, ClipRecord),
        "windows": windows,
        "decode_flags": list(clip.flags),
    }


async def pixels(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Pixel evidence of the decoded clip: candidate events for the critic, measurements for
    the specialists (runs beside the observers, off the critical path)."""
    svc = await services(runtime)
    return {"pixel_events": await pixel_event_records(svc, runtime.context, state["video"])}


async def _ground(
    kind: Literal["task", "scene"], state: State, runtime: Runtime[GazeContext]
) -> tuple[BaseModel | None, Update]:
    """(the memory, or None, and the bookkeeping fields of the update). One call gives both
    memories; the task node records its usage, prompt and failure, once."""
    ctx = runtime.context
    if not wants_memory(ctx, kind):
        return None, {}
    check_instruction(state["instruction"])
    called, result = await grounded(state, await services(runtime), ctx)
    memory = grounding.memory_of(result.value, kind)
    accounts = called == kind or (called == "both" and kind == "task")
    what = "task and scene memory" if called == "both" else f"{kind} memory"
    bookkeeping: Update = {
        "usage": result.records,
        "prompts": [grounding.MEMORIES[called][0]],
        "failures": failure("grounding", result, what),
    }
    not_assessed = [] if memory is not None else [f"{kind} memory"]
    return memory, {**(bookkeeping if accounts else {}), "not_assessed": not_assessed}


async def ground_task(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Task memory: the objective and its ordered subtasks (from the instruction and the
    initial scene)."""
    memory, update = await _ground("task", state, runtime)
    return {**update, "task_memory": record_of(memory, TaskMemoryRecord) if memory else None}


async def ground_scene(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Scene memory: workspace, objects, robot parts, relations and what is uncertain."""
    memory, update = await _ground("scene", state, runtime)
    return {**update, "scene_memory": record_of(memory, SceneMemoryRecord) if memory else None}


async def observe(state: State, runtime: Runtime[GazeContext]) -> Update:
    """One observer call per window, each as soon as its frames are encoded (it needs only the
    task memory, not the whole clip): what happens, per subtask."""
    ctx = runtime.context
    svc = await services(runtime)
    video = state["video"]
    if not diagnosing(ctx):  # judges only: the diagnosis branch makes no calls
        clip = await svc.clips.decoded(video)
        return {"observations": [empty_observation(window_ref(w)) for w in clip.windows]}
    job = svc.early.pop("observe", None)  # gaze.diagnose started them before the graph loaded
    if job is None:
        # the grounding call has answered by now: it shows whether the run talks to a server
        fitted = await svc.fit(ctx, svc.early.get("grounding"))

        async def memory() -> TaskMemoryRecord | None:
            return state.get("task_memory")

        job = asyncio.ensure_future(
            observe_windows(svc, fitted, state["instruction"], video, memory())
        )
    try:
        return await reporting(
            job, svc.observed, lambda i: runtime.stream_writer({"window_observed": i})
        )
    finally:
        job.cancel()


async def align(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Subtasks to window spans: the segments the specialists examine."""
    ctx = (await services(runtime)).settings(runtime.context)
    segments = clip_segments(
        state.get("windows", []), state.get("observations", []), state.get("task_memory"), ctx
    )
    return {"segments": segments}


async def route(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Per segment, the top-k dimensions by the router's relevance scores (one call scores
    every segment)."""
    ctx = runtime.context
    segments = state.get("segments", [])
    if not diagnosing(ctx):
        return {"routes": []}
    if not ctx.use_router:
        every = list(DIMENSIONS)
        return {
            "routes": [Route(segment_id=s["id"], dimensions=every, scores={}) for s in segments]
        }
    if not segments:
        return {"routes": [], "prompts": ["router"]}
    texts = router_texts(segments, state.get("observations", []), state.get("pixel_events", []))
    svc = await services(runtime)
    early: RouterCall | None = None
    job = svc.early.pop("route", None)  # gaze.diagnose started it before the graph loaded
    if job is not None:
        early = await job
    if early is not None and early.texts == texts:
        result, unused = early.result, []
    else:  # not started early, or asked otherwise than this node would: its cost still counts
        instruction = state["instruction"]
        result = await router.score_segments(svc.caller, instruction, texts, ctx.max_retries)
        unused = early.result.records if early is not None else []
    # every segment, when the call answered (``router.read_scores``)
    answered = {s.segment_id: s for s in result.value.segments} if result.value is not None else {}
    routes: list[Route] = []
    for segment in segments:
        given = answered.get(segment["id"])
        scores = router.scores_of(given) if given is not None else {}
        chosen = router.route(scores, ctx.top_k) if given is not None else []
        routes.append(Route(segment_id=segment["id"], scores=scores, dimensions=chosen))
    failures = failure("router", result, "clip")
    not_assessed = [
        f"{s['id']}/router (no dimension examined)" for s in segments if s["id"] not in answered
    ]
    return {
        "routes": routes,
        "usage": [*unused, *result.records],
        "failures": failures,
        "not_assessed": not_assessed,
        "prompts": ["router"],
    }
