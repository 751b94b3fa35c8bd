"""The critic node: a verdict on every hypothesis (``gaze.graph.specialist_node`` makes them).

Pixel-evidence events go to the critic as hypotheses of their own (source ``pixels``), so a model
run never silently drops what pixels showed: each is accepted or rejected with a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.runtime import Runtime

from gaze.agents import critic as critic_agent
from gaze.graph.frame_budget import held_frames
from gaze.graph.services import services
from gaze.graph.state import (
    CheckedHypothesis,
    EventRecord,
    Failure,
    Hypothesis,
    Segment,
    State,
    Update,
    failure,
)
from gaze.models.settle import all_settled
from gaze.models.structured import Structured
from gaze.schema.records import record_of
from gaze.settings.context import GazeContext, diagnosing

PIXEL_CONFIDENCE = 0.5
"""Prior confidence of a pixel-evidence hypothesis (the critic's verdict replaces it)."""


def pixel_hypotheses(
    events: Sequence[EventRecord], segments: Sequence[Segment]
) -> list[Hypothesis]:
    """Pixel events as hypotheses, each in the segment that holds its midpoint (pure)."""
    out: list[Hypothesis] = []
    for i, event in enumerate(events):
        middle = (event["start_s"] + event["end_s"]) / 2
        home = next(
            (s for s in segments if s["start_s"] <= middle <= s["end_s"]),
            min(segments, key=lambda s: abs(s["start_s"] - middle), default=None),
        )
        if home is None:
            continue
        out.append(
            Hypothesis(
                id=f"pixels:{i}",
                segment_id=home["id"],
                dimension=event["dimension"],  # type: ignore[typeddict-item]
                type=event["type"],
                start_s=event["start_s"],
                end_s=event["end_s"],
                explanation=event["description"],
                evidence=["pixel evidence", *event["evidence"]],
                objects=[],
                severity=round(event["severity"]),
                confidence=event["confidence"] or PIXEL_CONFIDENCE,
                source="pixels",
                regions=list(event.get("regions", [])),
                spans=list(event.get("spans", [])),
            )
        )
    return out


def _events(accepted: Sequence[Any], merge_iou: float) -> list[EventRecord]:
    return [record_of(e, EventRecord) for e in critic_agent.merge(accepted, merge_iou)]


async def critic(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Verify every hypothesis against its segment's frames; merge those about one event."""
    ctx = runtime.context
    if not diagnosing(ctx):
        return {"events": [], "rejected": []}
    segments = {s["id"]: s for s in state.get("segments", [])}
    hypotheses = sorted(state.get("hypotheses", []), key=lambda h: h["id"])
    hypotheses += pixel_hypotheses(state.get("pixel_events", []), list(segments.values()))
    if not ctx.use_critic:
        events = critic_agent.raw_events(hypotheses)
        return {"events": [record_of(e, EventRecord) for e in events]}
    svc = await services(runtime)
    ctx = svc.settings(ctx)
    clip = await svc.clips.decoded(state["video"])
    by_segment: dict[str, list[Hypothesis]] = {}
    for hyp in hypotheses:
        by_segment.setdefault(hyp["segment_id"], []).append(hyp)

    async def one(
        segment_id: str, group: list[Hypothesis]
    ) -> tuple[str, list[Hypothesis], Structured[critic_agent.CriticOutput]]:
        segment = segments[segment_id]
        held = held_frames(svc.frames_gate, clip, segment["windows"], ctx.max_frames_per_call)
        async with held as frames:
            result = await critic_agent.criticise(
                svc.caller,
                instruction=state["instruction"],
                segment=segment,
                hypotheses=group,
                frames=frames,
                task_memory=state.get("task_memory"),
                scene_memory=state.get("scene_memory"),
                max_retries=ctx.max_retries,
                video_windows=ctx.video_windows(),
            )
        return segment_id, group, result

    results = await all_settled(*(one(k, g) for k, g in by_segment.items()))
    accepted: list[CheckedHypothesis] = []
    rejected: list[CheckedHypothesis] = []
    usage: list[Any] = []
    failures: list[Failure] = []
    not_assessed: list[str] = []
    for segment_id, group, result in results:
        usage += result.records
        failures += failure("critic", result, segment_id)
        if result.value is None:
            kept = [critic_agent.unverified(h) for h in group]
        else:
            ok, no, kept = critic_agent.verify(group, result.value.verdicts, ctx.critic_threshold)
            accepted += ok
            rejected += no
        if kept:
            # kept as events, marked unverified: no verdict never reads as "no failure"
            accepted += kept
            not_assessed.append(
                f"{segment_id}/critic ({len(kept)} of {len(group)} hypotheses without a "
                "verdict, kept unverified)"
            )
    return {
        "events": _events(accepted, ctx.merge_iou),
        "rejected": rejected,
        "usage": usage,
        "failures": failures,
        "not_assessed": not_assessed,
        "prompts": ["critic"] if results else [],
    }
