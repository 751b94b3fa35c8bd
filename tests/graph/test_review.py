"""A person's review before the report (context ``review``): the run pauses with the events,
resumes with decisions, and the report holds exactly what the person decided; an answer that
does not validate pauses again with the reason; off by default, and refused where no pause can
be resumed."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from gaze.api import diagnose
from gaze.cli.diagnose_cmd import demo_clip
from gaze.errors import GazeInputError
from gaze.graph.graph import build_graph
from gaze.graph.review_node import ACCEPTED, ADDED, EDITED
from gaze.settings.context import GazeContext

CONTEXT = GazeContext(model="scripted:auto", use_cache=False, review=True)


def _run(graph, value, thread: str) -> dict:
    config = {"configurable": {"thread_id": thread}}
    return asyncio.run(graph.ainvoke(value, config, context=CONTEXT))


@pytest.fixture(scope="module")
def paused():
    graph = build_graph(checkpointer=InMemorySaver())
    video, instruction = demo_clip()
    first = _run(graph, {"video": str(video), "instruction": instruction}, "t1")
    return graph, first


def test_the_run_pauses_with_the_events_and_resumes_with_the_persons_decisions(paused):
    graph, first = paused
    assert "report" not in first
    (pause,) = first["__interrupt__"]
    shown = pause.value["events"]
    # the demo's two pixel events, by index, with their spans and types
    assert [e["index"] for e in shown] == [0, 1] and len(shown) == 2
    kinds = [e["type"] for e in shown]
    answer = {
        "decisions": [
            {"index": 0, "decision": "reject", "reason": "not visible"},
            {"index": 1, "decision": "edit", "edit": {"severity": 2, "description": "seen"}},
        ],
        "added": [
            {"dimension": "visual_quality", "type": "blur", "start_s": 1.0, "end_s": 2.0,
             "severity": 2, "description": "soft focus"}
        ],
    }  # fmt: skip
    report = _run(graph, Command(resume=answer), "t1")["report"]
    events = report["events"]
    assert [(e["type"], e["severity"]) for e in events] == [("blur", 2), (kinds[1], 2)]
    assert events[0]["evidence"] == [ADDED] and events[0]["confidence"] is None
    edited = events[1]
    assert edited["description"] == "seen" and edited["start_s"] == shown[1]["start_s"]
    assert edited["evidence"][-1] == f"{EDITED} (severity, description)"
    (rejected,) = [r for r in report["rejected"] if r["source"] == "review"]
    assert rejected["type"] == kinds[0] and rejected["reason"] == "rejected in review: not visible"
    assert rejected["start_s"] == shown[0]["start_s"]


def test_an_answer_that_does_not_validate_pauses_again_saying_why():
    graph = build_graph(checkpointer=InMemorySaver())
    video, instruction = demo_clip()
    _run(graph, {"video": str(video), "instruction": instruction}, "t2")
    for bad, words in (
        ({"decisions": [{"index": 0, "decision": "reject"}]}, "needs a reason"),
        ({"decisions": [{"index": 9, "decision": "accept"}]}, "only 2 were shown"),
        ({"decisions": [{"index": 0, "decision": "maybe"}]}, "decisions.0.decision"),
        ({"added": [{"dimension": "visual_quality", "type": "object_teleportation",
                     "start_s": 1, "end_s": 2, "severity": 3}]}, "belongs to"),
    ):  # fmt: skip
        again = _run(graph, Command(resume=bad), "t2")
        assert "report" not in again, bad
        assert words in again["__interrupt__"][0].value["problem"], bad
    report = _run(graph, Command(resume={"decisions": [{"index": 0, "decision": "accept"}]}), "t2")
    events = report["report"]["events"]
    assert len(events) == 2 and ACCEPTED in events[0]["evidence"]
    assert ACCEPTED not in events[1]["evidence"]  # not reviewed: left as the method said


def test_review_is_off_by_default_and_refused_where_nothing_can_resume_it():
    assert GazeContext().review is False
    video, instruction = demo_clip()
    with pytest.raises(GazeInputError, match="review pauses the run for a person"):
        diagnose(video, instruction, context=CONTEXT)
