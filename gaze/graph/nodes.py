"""The graph's nodes. Each reads state and the run context, calls its agent, and returns only
the fields it writes; call records and failures go to reducer fields."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import cv2
from langgraph.runtime import Runtime

import gaze  # noqa: F401  (quiets OpenCV logging before cv2 is imported)
from gaze.agents import critic as critic_agent
from gaze.agents import grounding, observer, router, specialist
from gaze.agents.common import subsample
from gaze.errors import GazeInputError
from gaze.graph.context import GazeContext
from gaze.graph.segments import align_segments
from gaze.graph.services import services
from gaze.graph.state import ObserveTask, SpecialistTask, State
from gaze.models.structured import Structured
from gaze.schema.inputs import check_instruction
from gaze.video import store
from gaze.video.frames import encode_jpeg, resize_max_side


def _failure(role: str, result: Structured[Any], where: str) -> list[dict[str, str]]:
    return (
        [] if result.value is not None else [{"role": role, "where": where, "detail": result.error}]
    )


def _initial(state: State, runtime: Runtime[GazeContext]) -> tuple[float, bytes]:
    """The initial scene: the given image, or the clip's first frame (read on its own, so the
    grounding calls start before the whole clip is decoded)."""
    max_side = runtime.context.max_side
    scene = state.get("initial_frame")
    if scene:
        image = cv2.imread(scene)
        if image is None:
            raise GazeInputError(f"initial frame {scene} is not an image gaze can read")
        return 0.0, encode_jpeg(resize_max_side(image, max_side))
    return 0.0, encode_jpeg(store.first_frame(state["video"], max_side))


async def load_clip(state: State, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    """Check the inputs, then start decoding (and pixel evidence) in the background; the clip's
    metadata and windows join the state with task grounding, which runs meanwhile."""
    started = time.time()
    check_instruction(state["instruction"])
    await asyncio.to_thread(store.first_frame, state["video"], runtime.context.max_side)
    sampling = services(runtime.context).sampling
    store.start_decode(state["video"], sampling)
    if runtime.context.pixel_hints or "signals" in runtime.context.judges:
        store.pixel_evidence(state["video"], sampling)
    return {"started_at": started}


async def clip_fields(state: State, ctx: GazeContext) -> dict[str, Any]:
    """The decoded clip's metadata and windows, as state fields."""
    clip = await store.decoded_async(state["video"], services(ctx).sampling)
    windows = [
        {"index": w.index, "start_s": w.start_s, "end_s": w.end_s, "frames": len(w.frame_indices)}
        for w in clip.windows
    ]
    return {
        "clip": clip.info.model_dump(mode="json"),
        "windows": windows,
        "decode_flags": list(clip.flags),
    }


async def _ground(kind: str, state: State, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    ctx = runtime.context
    field = f"{kind}_memory"
    if "diagnosis" not in ctx.judges or not getattr(ctx, f"use_{kind}_memory"):
        return {field: None}
    result = await grounding.ground(
        services(ctx).caller, kind, state["instruction"], _initial(state, runtime), ctx.max_retries
    )
    return {
        field: result.value.model_dump() if result.value else None,
        "usage": result.records,
        "failures": _failure("grounding", result, kind),
    }


async def ground_task(state: State, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    # the observers fan out from here, so the decoded clip's windows join the state here too
    memory, clip = await asyncio.gather(
        _ground("task", state, runtime), clip_fields(state, runtime.context)
    )
    return {**memory, **clip}


async def ground_scene(state: State, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    return await _ground("scene", state, runtime)


def _empty_observation(window: dict[str, Any]) -> dict[str, Any]:
    """A window's observation record before (or without) the observer's account."""
    return {
        "window": window["index"],
        "start_s": window["start_s"],
        "end_s": window["end_s"],
        "summary": "",
        "subtask_status": [],
        "notable": [],
    }


async def observe(task: ObserveTask, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    ctx = runtime.context
    if "diagnosis" not in ctx.judges:  # judges only: the diagnosis branch makes no calls
        window = task["window"]
        return {"observations": [_empty_observation(window)]}
    svc = services(ctx)
    clip = store.decoded(task["video"], svc.sampling)
    window = task["window"]
    frames = store.window_frames(clip, [window["index"]])
    result = await observer.observe_window(
        svc.caller, task["instruction"], window, frames, task["task_memory"], ctx.max_retries
    )
    observation = _empty_observation(window)
    if result.value is not None:
        observation.update(result.value.model_dump())
    return {
        "observations": [observation],
        "usage": result.records,
        "failures": _failure("observer", result, f"window {window['index']}"),
    }


async def align(state: State, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    memory = state.get("task_memory") or {}
    subtask_ids = [s["id"] for s in memory.get("subtasks", [])]
    observations = sorted(state.get("observations", []), key=lambda o: o["window"])
    segments = align_segments(
        state["windows"], observations, subtask_ids, runtime.context.max_segment_windows
    )
    return {"segments": [dict(s) for s in segments]}


def observations_text(state: State, segment: dict[str, Any]) -> str:
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


def pixel_hints_text(state: State, segment: dict[str, Any]) -> str:
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


async def collect_pixel_events(state: State, ctx: GazeContext) -> list[dict[str, Any]]:
    if not ctx.pixel_hints:
        return []
    job = store.pixel_evidence(state["video"], services(ctx).sampling)
    _, events = await asyncio.wrap_future(job)
    return [e.model_dump(mode="json") for e in events]


async def route(state: State, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    ctx = runtime.context
    segments = state.get("segments", [])
    if "diagnosis" not in ctx.judges:
        return {"routes": []}
    pixel_events = await collect_pixel_events(state, ctx)
    view = State(**{**state, "pixel_events": pixel_events})
    if not ctx.use_router:
        every = list(router.route({}, 6))
        routes = [{"segment_id": s["id"], "dimensions": every, "scores": {}} for s in segments]
        return {"routes": routes, "pixel_events": pixel_events}
    caller = services(ctx).caller

    async def one(segment: dict[str, Any]) -> tuple[dict[str, Any], Structured[Any]]:
        text = (
            observations_text(view, segment)
            + "\nPixel measurements:\n"
            + pixel_hints_text(view, segment)
        )
        return segment, await router.score_segment(
            caller, state["instruction"], segment, text, ctx.max_retries
        )

    results = await asyncio.gather(*(one(s) for s in segments))
    routes, usage, failures = [], [], []
    for segment, result in results:
        scores = router.scores_of(result.value) if result.value else {}
        routes.append(
            {
                "segment_id": segment["id"],
                "scores": scores,
                "dimensions": router.route(scores, ctx.top_k) if result.value else [],
            }
        )
        usage += result.records
        failures += _failure("router", result, segment["id"])
    return {"routes": routes, "usage": usage, "failures": failures, "pixel_events": pixel_events}


async def run_specialist(task: SpecialistTask, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    ctx = runtime.context
    svc = services(ctx)
    clip = store.decoded(task["video"], svc.sampling)
    segment = task["segment"]
    frames = subsample(store.window_frames(clip, segment["windows"]), ctx.max_frames_per_call)
    result = await specialist.examine(
        svc.caller,
        dimension=task["dimension"],
        instruction=task["instruction"],
        segment=segment,
        frames=frames,
        task_memory=task["task_memory"],
        scene_memory=task["scene_memory"],
        observations=task["observations"],
        pixel_hints=task["pixel_hints"],
        max_retries=ctx.max_retries,
    )
    hypotheses = (
        specialist.to_hypotheses(result.value, task["dimension"], segment, task["clip_end_s"])
        if result.value
        else []
    )
    return {
        "hypotheses": hypotheses,
        "usage": result.records,
        "failures": _failure("specialist", result, f"{segment['id']}/{task['dimension']}"),
    }


async def critic(state: State, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    ctx = runtime.context
    hypotheses = sorted(state.get("hypotheses", []), key=lambda h: h["id"])
    if not ctx.use_critic:
        events = critic_agent.raw_events(hypotheses)
        return {"events": [e.model_dump(mode="json") for e in events], "rejected": []}
    svc = services(ctx)
    clip = store.decoded(state["video"], svc.sampling)
    by_segment: dict[str, list[dict[str, Any]]] = {}
    for hyp in hypotheses:
        by_segment.setdefault(hyp["segment_id"], []).append(hyp)
    segments = {s["id"]: s for s in state.get("segments", [])}

    async def one(
        segment_id: str, group: list[dict[str, Any]]
    ) -> tuple[str, list[dict[str, Any]], Structured[critic_agent.CriticOutput]]:
        segment = segments[segment_id]
        frames = subsample(store.window_frames(clip, segment["windows"]), ctx.max_frames_per_call)
        result = await critic_agent.criticise(
            svc.caller,
            instruction=state["instruction"],
            segment=segment,
            hypotheses=group,
            frames=frames,
            task_memory=state.get("task_memory"),
            scene_memory=state.get("scene_memory"),
            max_retries=ctx.max_retries,
        )
        return segment_id, group, result

    results = await asyncio.gather(*(one(k, g) for k, g in by_segment.items()))
    accepted, rejected, usage, failures = [], [], [], []
    for segment_id, group, result in results:
        usage += result.records
        failures += _failure("critic", result, segment_id)
        if result.value is None:
            continue
        ok, no = critic_agent.verify(group, result.value.verdicts, ctx.critic_threshold)
        accepted += ok
        rejected += no
    events = critic_agent.merge(accepted, ctx.merge_iou)
    return {
        "events": [e.model_dump(mode="json") for e in events],
        "rejected": rejected,
        "usage": usage,
        "failures": failures,
    }
