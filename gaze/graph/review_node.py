"""A person's review before the report (context ``review``, off by default): the run pauses
(LangGraph ``interrupt``) showing the events found and the critic's rejections, and resumes with
a ``gaze.schema.review.ReviewAnswer``: accept, reject with a reason, or edit each event, and add
the ones the method missed. An answer that does not validate pauses again, saying why.

A rejected event joins the critic's rejections (source ``review``); every reviewed event says in
its evidence what the person did, so a report tells reviewed events from unreviewed ones.
"""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime
from langgraph.types import interrupt
from pydantic import ValidationError

from gaze.errors import first_error
from gaze.graph.services import finish
from gaze.graph.state import State, Update
from gaze.schema.events import Event
from gaze.schema.records import CheckedHypothesis, EventRecord
from gaze.schema.review import REJECT_REASONS, Decision, ReviewAnswer
from gaze.settings.context import GazeContext

ACCEPTED = "reviewed: accepted by a person"
EDITED = "reviewed: edited by a person"
ADDED = "reviewed: added by a person (the method missed it)"


def _shown(state: State) -> dict[str, Any]:
    """What the pause shows (JSON): the events by index, the critic's rejections, the rules."""
    return {
        "clip_id": state.get("clip_id") or state["video"],
        "instruction": state["instruction"],
        "events": [{"index": i, **e} for i, e in enumerate(state.get("events", []))],
        "rejected_by_critic": [
            {k: h[k] for k in ("dimension", "type", "start_s", "end_s", "reason")}
            for h in state.get("rejected", [])
        ],
        "answer": {
            "decisions": [
                {"index": 0, "decision": "accept | reject | edit", "reason": list(REJECT_REASONS),
                 "edit": {"type": "...", "start_s": 0.0, "end_s": 1.0, "severity": 3}}
            ],
            "added": [
                {"dimension": "...", "type": "...", "start_s": 0.0, "end_s": 1.0, "severity": 3,
                 "description": "..."}
            ],
        },
    }  # fmt: skip


def apply_review(
    events: list[EventRecord], rejected: list[CheckedHypothesis], answer: ReviewAnswer
) -> tuple[list[EventRecord], list[CheckedHypothesis]]:
    """The events and rejections after ``answer``; raises ValueError naming the first decision
    or event that cannot be applied (an index out of range, a rejection without a reason, an
    edit or addition that is not a valid event)."""
    decided: dict[int, Decision] = {}
    for d in answer.decisions:
        if d.index >= len(events):
            raise ValueError(f"decision on event {d.index}: only {len(events)} were shown")
        if d.index in decided:
            raise ValueError(f"event {d.index} has two decisions")
        if d.decision == "reject" and d.reason is None:
            raise ValueError(f"rejecting event {d.index} needs a reason: {list(REJECT_REASONS)}")
        if d.decision == "edit" and d.edit is None:
            raise ValueError(f"editing event {d.index} needs the fields to change ('edit')")
        decided[d.index] = d
    kept: list[EventRecord] = []
    dropped = list(rejected)
    for index, event in enumerate(events):
        said = decided.get(index)
        if said is None:
            kept.append(event)
        elif said.decision == "reject":
            dropped.append(_rejection(event, f"rejected in review: {said.reason}", index))
        else:
            changes = said.edit.model_dump(exclude_none=True) if said.edit else {}
            note = ACCEPTED if said.decision == "accept" else f"{EDITED} ({', '.join(changes)})"
            kept.append(_valid({**event, **changes, "evidence": [*event["evidence"], note]}, index))
    for number, added in enumerate(answer.added):
        fields = added.model_dump(exclude_none=True)
        missing = {"dimension", "type", "start_s", "end_s", "severity"} - set(fields)
        if missing:
            raise ValueError(f"added event {number}: missing {sorted(missing)}")
        record = {"description": "", **fields, "evidence": [ADDED], "confidence": None}
        kept.append(_valid(record, f"added {number}"))
    return sorted(kept, key=lambda e: (e["start_s"], e["end_s"])), dropped


def _valid(record: dict[str, Any], which: object) -> EventRecord:
    fields = {k: v for k, v in record.items() if k in Event.model_fields}
    try:
        event = Event.model_validate({"dimensions": [], **fields})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"event {which}: {first['msg']}") from None
    dumped: EventRecord = event.model_dump(mode="json")  # type: ignore[assignment]
    return dumped


def _rejection(event: EventRecord, reason: str, index: int) -> CheckedHypothesis:
    return CheckedHypothesis(
        id=f"review-{index}",
        segment_id="review",
        dimension=event["dimension"],  # type: ignore[typeddict-item]
        type=event["type"],
        start_s=event["start_s"],
        end_s=event["end_s"],
        explanation=event["description"],
        evidence=list(event["evidence"]),
        objects=[],
        severity=round(event["severity"]),
        confidence=1.0 if event["confidence"] is None else event["confidence"],
        source="review",
        reason=reason,
    )


async def review(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Pause for a person when the context asks for it; otherwise pass the events on."""
    if not runtime.context.review:
        return {}
    # the pause may last days: the services this run opened are closed first (a resumed run
    # opens its own), and the node runs again from here when resumed
    await finish(runtime)
    shown, problem = _shown(state), ""
    while True:
        value = interrupt({**shown, "problem": problem} if problem else shown)
        try:
            answer = ReviewAnswer.model_validate(value)
            events, rejected = apply_review(
                list(state.get("events", [])), list(state.get("rejected", [])), answer
            )
        except ValidationError as exc:
            problem = first_error(exc)
            continue
        except ValueError as exc:
            problem = str(exc)
            continue
        return {"events": events, "rejected": rejected}
