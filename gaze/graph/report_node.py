"""The last node: the report, with its run manifest (models, prompts, calls, tokens, time)."""

from __future__ import annotations

import time

from langgraph.runtime import Runtime

from gaze.graph.crosscheck import pa_notes, progress_notes
from gaze.graph.services import RunServices, finish, services
from gaze.graph.state import CheckedHypothesis, State, Update
from gaze.models.caller import usage_totals
from gaze.pixels.diagnosis import pixel_signals
from gaze.prompts import load_prompt
from gaze.redact import redact
from gaze.schema.clip_info import ClipInfo
from gaze.schema.dimensions import DIMENSIONS
from gaze.schema.events import Event
from gaze.schema.input_rules import default_clip_id
from gaze.schema.report import (
    Assessment,
    JudgeScore,
    ProgressCurve,
    RejectedHypothesis,
    Report,
    RunManifest,
    run_manifest,
)
from gaze.settings.context import GazeContext

DIAGNOSIS_ROLES = ("grounding", "observer", "router", "specialist", "critic")


def graph_assessment(ctx: GazeContext, incomplete: list[str]) -> Assessment:
    """What a graph report covers: the six dimensions when the diagnosis ran (less the parts
    whose calls failed), none when only the judges ran."""
    if "diagnosis" not in ctx.sections:
        return Assessment(
            mode="graph",
            assessed=[],
            not_assessed=list(DIMENSIONS),
            note=(
                f"Sections {', '.join(ctx.sections)} only: no failure dimension was diagnosed, "
                "so the empty event list says nothing about failures."
            ),
        )
    return Assessment(
        mode="graph",
        assessed=list(DIMENSIONS),
        not_assessed=[],
        incomplete=incomplete,
        note=(
            "All six dimensions were open to the router; each segment was examined by its "
            f"top {ctx.top_k if ctx.use_router else 6} dimensions' specialists and "
            + ("verified by the critic. " if ctx.use_critic else "not verified (no critic). ")
            + (
                f"Not assessed (calls without usable output): {', '.join(incomplete)}. The "
                "events listed are what the assessed parts showed; the rest may hold more."
                if incomplete
                else "An empty event list means no failure was visible in the sampled frames."
            )
        ),
    )


def manifest(state: State, ctx: GazeContext, svc: RunServices) -> RunManifest:
    caller = svc.caller
    usage = state.get("usage", [])
    used_roles = sorted({r["role"] for r in usage})
    used_prompts = sorted(set(state.get("prompts", [])))
    return run_manifest(
        ctx.settings(),
        time.time() - state.get("started_at", time.time()),
        prompts=[load_prompt(p).record for p in used_prompts],
        models={role: caller.model_name(role) for role in used_roles},
        usage=usage_totals(usage, caller.pricing),
        served_images=svc.served_for(len(state.get("windows", []))),
    )


def diagnosis_flags(state: State) -> tuple[list[str], list[str]]:
    """(flags, incomplete parts) from the calls that never gave usable output (DESIGN section
    3): no diagnosis call parsed -> ``parse_failed``; some parts not assessed -> ``partial``,
    naming them. A hypothesis dropped for an impossible span is a problem, not a gap."""
    records = [r for r in state.get("usage", []) if r["role"] in DIAGNOSIS_ROLES]
    incomplete = sorted(set(state.get("not_assessed", [])))
    if records and not any(r.get("ok", True) for r in records):
        return ["parse_failed"], incomplete
    return (["partial"] if incomplete else []), incomplete


async def report(state: State, runtime: Runtime[GazeContext]) -> Update:
    """The report, with its run manifest; closes the run's services if the graph opened them."""
    svc = await services(runtime)
    ctx = svc.settings(runtime.context)
    try:
        return {"report": (await _report(state, ctx, svc)).model_dump(mode="json")}
    finally:
        await finish(runtime)


async def _report(state: State, ctx: GazeContext, svc: RunServices) -> Report:
    failures = state.get("failures", [])
    flags, incomplete = diagnosis_flags(state)
    flags += list(state.get("decode_flags", []))
    events = [Event.model_validate(e) for e in state.get("events", [])]
    if "parse_failed" in flags:
        events = []
    signals = None
    if "signals" in ctx.sections:
        series, _ = await svc.clips.pixel_evidence(state["video"])
        signals = pixel_signals(await svc.clips.decoded(state["video"]), series)
    judge_failures = state.get("judge_failures", [])
    if judge_failures:
        flags.append("judge_failed")
    consistency = progress_notes(events, state.get("progress")) + pa_notes(events, state.get("pa"))
    result = Report(
        clip_id=state.get("clip_id") or default_clip_id(state["video"]),
        instruction=state["instruction"],
        initial_frame=state.get("initial_frame"),
        clip=ClipInfo.model_validate(state["clip"]),
        events=events,
        flags=flags,
        assessment=graph_assessment(ctx, incomplete),
        signals=signals,
        rejected=[_rejection(h) for h in state.get("rejected", [])],
        problems=[
            redact(f"{f['role']} ({f['where']}): {f['detail']}") for f in failures + judge_failures
        ],
        pa=JudgeScore.model_validate(state["pa"]) if state.get("pa") else None,
        ia=JudgeScore.model_validate(state["ia"]) if state.get("ia") else None,
        progress=ProgressCurve.model_validate(state["progress"]) if state.get("progress") else None,
        consistency=consistency,
        manifest=manifest(state, ctx, svc),
    )
    return result


def _rejection(h: CheckedHypothesis) -> RejectedHypothesis:
    return RejectedHypothesis(
        dimension=h["dimension"],
        type=h["type"],
        start_s=h["start_s"],
        end_s=h["end_s"],
        confidence=h["confidence"],
        reason=h["reason"],
        source=h.get("source", "specialist"),
    )
