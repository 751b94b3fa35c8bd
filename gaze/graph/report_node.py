"""The last node: the report, with its run manifest (models, prompts, calls, tokens, time)."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from langgraph.runtime import Runtime

from gaze import __version__
from gaze.graph.context import GazeContext
from gaze.graph.crosscheck import pa_notes, progress_notes
from gaze.graph.services import services
from gaze.graph.state import State
from gaze.models.caller import usage_totals
from gaze.pixel_diagnosis import pixel_signals
from gaze.prompts import PROMPT_IDS, load_prompt
from gaze.schema.codebook import DIMENSIONS, load_codebook
from gaze.schema.events import Event
from gaze.schema.report import (
    Assessment,
    ClipInfo,
    JudgeScore,
    ProgressCurve,
    RejectedHypothesis,
    Report,
    RunManifest,
)
from gaze.video import store

ROLE_OF_PROMPT = {
    "ground_task": "grounding",
    "ground_scene": "grounding",
    "observer": "observer",
    "router": "router",
    "specialist": "specialist",
    "critic": "critic",
}


def graph_assessment(ctx: GazeContext) -> Assessment:
    return Assessment(
        mode="graph",
        assessed=list(DIMENSIONS),
        not_assessed=[],
        note=(
            "All six dimensions were open to the router; each segment was examined by its "
            f"top {ctx.top_k if ctx.use_router else 6} dimensions' specialists and "
            + ("verified by the critic. " if ctx.use_critic else "not verified (no critic). ")
            + "An empty event list means no failure was visible in the sampled frames."
        ),
    )


def manifest(state: State, ctx: GazeContext) -> RunManifest:
    usage = state.get("usage", [])
    caller = services(ctx).caller
    used_roles = sorted({r["role"] for r in usage})
    book = load_codebook()
    return RunManifest(
        gaze_version=__version__,
        codebook_version=book.version,
        codebook_hash=book.hash,
        prompts=[load_prompt(p).record for p in PROMPT_IDS],
        models={role: caller.model_name(role) for role in used_roles},
        settings=ctx.settings(),
        **usage_totals(usage, ctx.cost),
        wall_time_s=round(time.time() - state.get("started_at", time.time()), 3),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


async def report(state: State, runtime: Runtime[GazeContext]) -> dict[str, Any]:
    ctx = runtime.context
    failures = state.get("failures", [])
    flags = list(state.get("decode_flags", []))
    events = [Event.model_validate(e) for e in state.get("events", [])]
    if failures:  # DESIGN: output that cannot be parsed gives an empty, flagged report
        flags.insert(0, "parse_failed")
        events = []
    signals = None
    if "signals" in ctx.judges:
        sampling = services(ctx).sampling
        series, _ = await asyncio.wrap_future(store.pixel_evidence(state["video"], sampling))
        signals = pixel_signals(store.decoded(state["video"], sampling), series)
    judge_failures = state.get("judge_failures", [])
    if judge_failures:
        flags.append("judge_failed")
    consistency = progress_notes(events, state.get("progress")) + pa_notes(events, state.get("pa"))
    result = Report(
        clip_id=state.get("clip_id") or state["video"].rsplit("/", 1)[-1].rsplit(".", 1)[0],
        instruction=state["instruction"],
        initial_frame=state.get("initial_frame"),
        clip=ClipInfo.model_validate(state["clip"]),
        events=events,
        flags=flags,
        assessment=graph_assessment(ctx),
        signals=signals,
        rejected=[_rejection(h) for h in state.get("rejected", [])],
        problems=[f"{f['role']} ({f['where']}): {f['detail']}" for f in failures + judge_failures],
        pa=JudgeScore.model_validate(state["pa"]) if state.get("pa") else None,
        ia=JudgeScore.model_validate(state["ia"]) if state.get("ia") else None,
        progress=ProgressCurve.model_validate(state["progress"]) if state.get("progress") else None,
        consistency=consistency,
        manifest=manifest(state, ctx),
    )
    return {"report": result.model_dump(mode="json")}


def _rejection(h: dict[str, Any]) -> RejectedHypothesis:
    return RejectedHypothesis.model_validate(
        {
            "dimension": h["dimension"],
            "type": h["type"],
            "start_s": h["start_s"],
            "end_s": h["end_s"],
            "confidence": h["confidence"],
            "reason": h["reason"],
        }
    )
