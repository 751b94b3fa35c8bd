"""The critic: verifies hypotheses against the frames, then merges those about one event.

The model gives a verdict per hypothesis; accepting (verdict + confidence threshold) and merging
(same objects, or the same type when objects are not named; temporal IoU at or above a
threshold) are pure functions below."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gaze.agents.common import VideoCut, as_text, frames_then_task, span_text
from gaze.matching.spans import merged
from gaze.models.caller import Caller
from gaze.models.structured import Structured, ask
from gaze.prompts import load_prompt
from gaze.prompts.codebook_text import type_rules
from gaze.schema.events import Event, EvidenceRegion
from gaze.schema.records import CheckedHypothesis, Hypothesis, SceneMemoryRecord, TaskMemoryRecord

INSTANT_SPAN_S = 0.25
"""Spans shorter than this (instants) are widened to it around their centre for IoU."""


class Verdict(BaseModel):
    """The critic's decision on one hypothesis (by its index in the list shown)."""

    model_config = ConfigDict(extra="forbid")
    index: int = Field(ge=0)
    decision: Literal["accept", "reject"]
    reason: str
    confidence: float = Field(ge=0, le=1)


class CriticOutput(BaseModel):
    """One verdict per hypothesis."""

    model_config = ConfigDict(extra="forbid")
    verdicts: list[Verdict]


def hypotheses_text(hypotheses: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(
        f"[{i}] {h['dimension']}/{h['type']} {span_text(h['start_s'], h['end_s'])} "
        f"severity {h['severity']} confidence {h['confidence']:.2f}; objects: "
        f"{', '.join(h['objects']) or '-'}; {h['explanation']} Evidence: {'; '.join(h['evidence'])}"
        for i, h in enumerate(hypotheses)
    )


async def criticise(
    caller: Caller,
    *,
    instruction: str,
    segment: Mapping[str, Any],
    hypotheses: Sequence[Mapping[str, Any]],
    frames: Sequence[tuple[float, bytes]],
    task_memory: TaskMemoryRecord | None,
    scene_memory: SceneMemoryRecord | None,
    max_retries: int,
    video_windows: VideoCut | None = None,
) -> Structured[CriticOutput]:
    prompt = load_prompt("critic")
    where = f"{segment['id']} ({span_text(segment['start_s'], segment['end_s'])})"
    text = prompt.render(
        instruction=instruction,
        task_memory=as_text(task_memory),
        scene_memory=as_text(scene_memory),
        segment=where,
        hypotheses=hypotheses_text(hypotheses),
        type_rules=type_rules(h["type"] for h in hypotheses),
    )
    messages = frames_then_task(frames, text, video_windows)
    return await ask(caller, "critic", messages, CriticOutput, max_retries=max_retries, label=where)


NO_VERDICT = "unverified: the critic gave no verdict"
"""Evidence line of a hypothesis kept as an event without a verdict (and the reason recorded)."""


def _checked(hyp: Hypothesis, confidence: float, reason: str) -> CheckedHypothesis:
    checked: CheckedHypothesis = {**hyp, "confidence": confidence, "reason": reason}
    return checked


def unverified(hyp: Hypothesis) -> CheckedHypothesis:
    """A hypothesis the critic did not rule on, kept as it was proposed (its evidence, pixel
    evidence included, and its own confidence), marked unverified. No verdict is not a
    rejection: dropping it would turn a critic that said nothing into "no failure"."""
    checked = _checked(hyp, hyp["confidence"], NO_VERDICT)
    checked["evidence"] = [*hyp["evidence"], NO_VERDICT]
    return checked


def verify(
    hypotheses: Sequence[Hypothesis], verdicts: Sequence[Verdict], threshold: float
) -> tuple[list[CheckedHypothesis], list[CheckedHypothesis], list[CheckedHypothesis]]:
    """(accepted, rejected, unverified), each with the critic's reason. Accepted: the critic
    said accept with confidence >= threshold; the critic's confidence replaces the
    specialist's. A hypothesis without a verdict is unverified (``unverified``)."""
    by_index: dict[int, Verdict] = {}
    for given in verdicts:
        by_index.setdefault(given.index, given)
    accepted: list[CheckedHypothesis] = []
    rejected: list[CheckedHypothesis] = []
    kept: list[CheckedHypothesis] = []
    for i, hyp in enumerate(hypotheses):
        verdict = by_index.get(i)
        if verdict is None:
            kept.append(unverified(hyp))
        elif verdict.decision == "accept" and verdict.confidence >= threshold:
            accepted.append(_checked(hyp, verdict.confidence, verdict.reason))
        else:
            why = (
                verdict.reason
                if verdict.decision == "reject"
                else (f"confidence {verdict.confidence:.2f} below {threshold:g}: {verdict.reason}")
            )
            rejected.append(_checked(hyp, verdict.confidence, why))
    return accepted, rejected, kept


def temporal_iou(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    """IoU of two spans in seconds, instants widened to INSTANT_SPAN_S."""

    def widen(h: Mapping[str, Any]) -> tuple[float, float]:
        s, e = float(h["start_s"]), float(h["end_s"])
        if e - s < INSTANT_SPAN_S:
            mid = (s + e) / 2
            return mid - INSTANT_SPAN_S / 2, mid + INSTANT_SPAN_S / 2
        return s, e

    (s1, e1), (s2, e2) = widen(a), widen(b)
    inter = max(0.0, min(e1, e2) - max(s1, s2))
    union = max(e1, e2) - min(s1, s2)
    return inter / union if union > 0 else 0.0


def _same_event(a: Mapping[str, Any], b: Mapping[str, Any], iou: float) -> bool:
    """Same physical event: overlapping in time (IoU >= iou) and about the same thing: a shared
    object when both name objects, else the same failure type."""
    if temporal_iou(a, b) < iou:
        return False
    objects_a = {o.strip().lower() for o in a["objects"] if o.strip()}
    objects_b = {o.strip().lower() for o in b["objects"] if o.strip()}
    if objects_a and objects_b:
        return bool(objects_a & objects_b)
    return bool(a["type"] == b["type"])


def merge(accepted: Sequence[Mapping[str, Any]], iou: float) -> list[Event]:
    """Group accepted hypotheses about the same physical event (transitively) into events: the
    most confident member names type and dimension; span is the union; severity and confidence
    the maximum; evidence and implicated dimensions the union."""
    groups: list[list[Mapping[str, Any]]] = []
    for hyp in sorted(accepted, key=lambda h: (h["start_s"], -h["confidence"])):
        homes = [g for g in groups if any(_same_event(hyp, member, iou) for member in g)]
        if not homes:
            groups.append([hyp])
            continue
        first = homes[0]
        first.append(hyp)
        for other in homes[1:]:
            first.extend(other)
            groups.remove(other)
    events = []
    for group in groups:
        lead = max(group, key=lambda h: (h["confidence"], h["severity"]))
        evidence = list(dict.fromkeys(e for h in group for e in h["evidence"]))
        if len(group) > 1:
            evidence.append(
                f"merged {len(group)} hypotheses: "
                + ", ".join(f"{h['dimension']}/{h['type']}" for h in group)
            )
        dimensions = list(dict.fromkeys([lead["dimension"], *(h["dimension"] for h in group)]))
        events.append(
            Event(
                dimension=lead["dimension"],
                type=lead["type"],
                start_s=min(h["start_s"] for h in group),
                end_s=max(h["end_s"] for h in group),
                severity=float(max(h["severity"] for h in group)),
                description=lead["explanation"],
                evidence=evidence,
                confidence=round(max(h["confidence"] for h in group), 4),
                dimensions=dimensions,
                regions=_regions(group),
                spans=_spans(group),
            )
        )
    return sorted(events, key=lambda e: (e.start_s, e.end_s, e.type))


def raw_events(hypotheses: Sequence[Mapping[str, Any]]) -> list[Event]:
    """Without a critic (ablation): every hypothesis becomes an event as proposed."""
    return sorted(
        (
            Event(
                dimension=h["dimension"],
                type=h["type"],
                start_s=h["start_s"],
                end_s=h["end_s"],
                severity=float(h["severity"]),
                description=h["explanation"],
                evidence=list(h["evidence"]),
                confidence=h["confidence"],
                regions=_regions([h]),
                spans=_spans([h]),
            )
            for h in hypotheses
        ),
        key=lambda e: (e.start_s, e.end_s, e.type),
    )


def _spans(group: Sequence[Mapping[str, Any]]) -> list[tuple[float, float]]:
    """The intervals of a group whose members name several (``Event.spans``), overlapping ones
    joined; empty when every member is one interval (the event is then its [start, end])."""
    if not any(h.get("spans") for h in group):
        return []
    return merged(
        [
            (float(s), float(e))
            for h in group
            for s, e in (h.get("spans") or [(h["start_s"], h["end_s"])])
        ]
    )


def _regions(group: Sequence[Mapping[str, Any]]) -> list[EvidenceRegion]:
    """The boxes every member of a group names (pixel evidence's), each once, in order."""
    seen: dict[str, EvidenceRegion] = {}
    for hyp in group:
        for region in hyp.get("regions", []):
            parsed = EvidenceRegion.model_validate(region)
            seen.setdefault(parsed.model_dump_json(), parsed)
    return list(seen.values())
