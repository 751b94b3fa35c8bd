"""The diagnosis nodes up to routing. Each reads state and the run context, calls its agent, and
returns only the fields its name promises; call records, prompts used and failures go to
reducer fields. Nothing here blocks the event loop: decoding, image reads and the pixel pass
run in worker threads through the run's clip store.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal, cast

from langgraph.runtime import Runtime

import gaze  # noqa: F401  (quiets OpenCV logging before cv2 is imported)
from gaze.agents import grounding, observer, router
from gaze.graph.context import GazeContext
from gaze.graph.early import diagnosing, grounded, wants_memory, wants_pixels
from gaze.graph.segments import align_segments
from gaze.graph.services import services
from gaze.graph.state import (
    ClipRecord,
    EventRecord,
    Failure,
    Observation,
    Route,
    SceneMemoryRecord,
    Segment,
    State,
    TaskMemoryRecord,
    Update,
    WindowRef,
)
from gaze.models.structured import Structured
from gaze.schema.codebook import DIMENSIONS
from gaze.schema.inputs import check_instruction
from gaze.video.store import window_frames


def failure(role: str, result: Structured[Any], where: str) -> list[Failure]:
    """The failure record of a call that never produced a usable reply (none if it did)."""
    if result.value is not None:
        return []
    return [Failure(role=role, where=where, detail=result.error)]


async def load_clip(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Check the inputs, decode the clip once (frames encoded once), and write its metadata,
    windows and decoding flags."""
    started = time.time()
    check_instruction(state["instruction"])
    clip = await (await services(runtime)).clips.decoded(state["video"])
    windows = [
        WindowRef(index=w.index, start_s=w.start_s, end_s=w.end_s, frames=len(w.frame_indices))
        for w in clip.windows
    ]
    return {
        "started_at": started,
        "clip": cast(ClipRecord, clip.info.model_dump(mode="json")),
        "windows": windows,
        "decode_flags": list(clip.flags),
    }


async def pixels(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Pixel evidence of the decoded clip: candidate events for the critic, measurements for
    the specialists (runs beside the observers, off the critical path)."""
    ctx = runtime.context
    if not wants_pixels(ctx):
        return {"pixel_events": []}
    _, events = await (await services(runtime)).clips.pixel_evidence(state["video"])
    if not (diagnosing(ctx) and ctx.pixel_hints):
        return {"pixel_events": []}
    return {"pixel_events": [cast(EventRecord, e.model_dump(mode="json")) for e in events]}


async def _ground(
    kind: Literal["task", "scene"], state: State, runtime: Runtime[GazeContext]
) -> tuple[dict[str, object] | None, Update]:
    """(memory as JSON or None, the bookkeeping fields of the update)."""
    ctx = runtime.context
    if not wants_memory(ctx, kind):
        return None, {}
    check_instruction(state["instruction"])
    result = await grounded(kind, state, await services(runtime), ctx)
    memory = result.value.model_dump() if result.value else None
    return memory, {
        "usage": result.records,
        "prompts": [grounding.MEMORIES[kind][0]],
        "failures": failure("grounding", result, f"{kind} memory"),
        "not_assessed": [] if memory is not None else [f"{kind} memory"],
    }


async def ground_task(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Task memory: the objective and its ordered subtasks (from the instruction and the
    initial scene)."""
    memory, update = await _ground("task", state, runtime)
    return {**update, "task_memory": cast(TaskMemoryRecord | None, memory)}


async def ground_scene(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Scene memory: workspace, objects, robot parts, relations and what is uncertain."""
    memory, update = await _ground("scene", state, runtime)
    return {**update, "scene_memory": cast(SceneMemoryRecord | None, memory)}


def empty_observation(window: WindowRef) -> Observation:
    """A window's observation record before (or without) the observer's account."""
    return Observation(
        window=window["index"],
        start_s=window["start_s"],
        end_s=window["end_s"],
        summary="",
        subtask_status=[],
        notable=[],
    )


async def observe(state: State, runtime: Runtime[GazeContext]) -> Update:
    """One observer call per window, all in parallel: what happens, per subtask."""
    ctx = runtime.context
    windows = state.get("windows", [])
    if not diagnosing(ctx):  # judges only: the diagnosis branch makes no calls
        return {"observations": [empty_observation(w) for w in windows]}
    svc = await services(runtime)
    clip = await svc.clips.decoded(state["video"])

    async def one(window: WindowRef) -> dict[str, Any]:
        async with svc.frames_gate:
            frames = window_frames(clip, [window["index"]])
            result = await observer.observe_window(
                svc.caller,
                state["instruction"],
                window,
                frames,
                state.get("task_memory"),
                ctx.max_retries,
            )
        runtime.stream_writer({"window_observed": window["index"]})  # live progress, per window
        observation = empty_observation(window)
        if result.value is not None:
            observation.update(result.value.model_dump())  # type: ignore[typeddict-item]
        where = f"window {window['index']}"
        return {
            "observation": observation,
            "usage": result.records,
            "failures": failure("observer", result, where),
            "not_assessed": [] if result.value is not None else [where],
        }

    done = await asyncio.gather(*(one(w) for w in windows))
    return {
        "observations": [d["observation"] for d in done],
        "usage": [r for d in done for r in d["usage"]],
        "failures": [f for d in done for f in d["failures"]],
        "not_assessed": [w for d in done for w in d["not_assessed"]],
        "prompts": ["observer"],
    }


async def align(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Subtasks to window spans: the segments the specialists examine."""
    memory = state.get("task_memory")
    subtask_ids = [s["id"] for s in memory["subtasks"]] if memory else []
    observations = sorted(state.get("observations", []), key=lambda o: o["window"])
    segments = align_segments(
        state.get("windows", []), observations, subtask_ids, runtime.context.max_segment_windows
    )
    return {"segments": segments}


def observations_text(state: State, segment: Segment) -> str:
    lines = []
    for obs in sorted(state.get("observations", []), key=lambda o: o["window"]):
        if obs["window"] not in segment["windows"]:
            continue
        lines.append(
            f"window {obs['window']} ({obs['start_s']:.2f}-{obs['end_s']:.2f} s): "
            f"{obs['summary'] or '(no observation)'}"
        )
        lines += [f"  {s['subtask_id']}: {s['status']}" for s in obs["subtask_status"]]
        lines += [f"  t={n['time_s']:.2f}s {n['what']}" for n in obs["notable"]]
    return "\n".join(lines) or "(none)"


def pixel_hints_text(state: State, segment: Segment) -> str:
    hits = [
        e
        for e in state.get("pixel_events", [])
        if e["start_s"] <= segment["end_s"] and e["end_s"] >= segment["start_s"]
    ]
    if not hits:
        return "(no pixel signal fired in this segment)"
    return "\n".join(
        f"- {e['start_s']:.2f}-{e['end_s']:.2f} s {e['type']}: {e['description']} "
        f"[{'; '.join(e['evidence'])}]"
        for e in hits
    )


async def route(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Per segment, the top-k dimensions by the router's relevance scores."""
    ctx = runtime.context
    segments = state.get("segments", [])
    if not diagnosing(ctx):
        return {"routes": []}
    if not ctx.use_router:
        every = list(DIMENSIONS)
        return {
            "routes": [Route(segment_id=s["id"], dimensions=every, scores={}) for s in segments]
        }
    caller = (await services(runtime)).caller

    async def one(segment: Segment) -> tuple[Segment, Structured[router.RouterOutput]]:
        text = (
            observations_text(state, segment)
            + "\nPixel measurements:\n"
            + pixel_hints_text(state, segment)
        )
        return segment, await router.score_segment(
            caller, state["instruction"], segment, text, ctx.max_retries
        )

    results = await asyncio.gather(*(one(s) for s in segments))
    routes: list[Route] = []
    usage, failures, not_assessed = [], [], []
    for segment, result in results:
        scores = router.scores_of(result.value) if result.value else {}
        chosen = router.route(scores, ctx.top_k) if result.value else []
        routes.append(Route(segment_id=segment["id"], scores=scores, dimensions=chosen))
        usage += result.records
        failures += failure("router", result, segment["id"])
        if result.value is None:
            not_assessed.append(f"{segment['id']}/router (no dimension examined)")
    return {
        "routes": routes,
        "usage": usage,
        "failures": failures,
        "not_assessed": not_assessed,
        "prompts": ["router"],
    }
