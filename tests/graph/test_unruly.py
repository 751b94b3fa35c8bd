"""Every node meets model output as it really comes: ``scripted:unruly`` answers with prose and
fences around the JSON, truncated replies, refusals, severities as words, Title Case and unknown
type names, spans outside the clip, ends before starts, missing verdicts and the wrong number of
progress values. The report must keep what is usable, drop what is impossible (and say so), and
never invent an event."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from gaze.api import adiagnose
from gaze.models.unruly import CASES, UnrulyBackbone
from gaze.settings.context import GazeContext


@pytest.fixture(scope="module")
def unruly_run(forge_dir, forge_rows):
    row = forge_rows["object_teleportation"]
    backbone = UnrulyBackbone()
    report = asyncio.run(
        adiagnose(
            forge_dir / row.video,
            row.instruction,
            backbones={"default": backbone},
            context=GazeContext(use_cache=False, sections=["diagnosis", "pa_ia", "progress"]),
        )
    )
    return report, backbone, row


def retried(backbone: UnrulyBackbone) -> Counter:
    return Counter(
        r.role for r in backbone.requests if any(m.role == "assistant" for m in r.messages)
    )


def test_the_unruly_backbone_is_named_scripted_unruly():
    from gaze.models.registry import make_backbone

    assert isinstance(make_backbone("scripted:unruly"), UnrulyBackbone)
    assert set(CASES) >= {"grounding", "observer", "router", "specialist", "critic", "progress"}


def test_no_event_is_invented_from_an_impossible_span(unruly_run):
    report, _, _ = unruly_run
    duration = report.clip.duration_s
    assert report.events, "usable hypotheses survive"
    for event in report.events:
        assert event.start_s < event.end_s <= duration  # no 8.00-8.00, no zero-length event
    outside = [p for p in report.problems if "lies outside the clip" in p]
    backwards = [p for p in report.problems if "ends before it starts" in p]
    assert outside and backwards
    assert all("500-900 s" in p for p in outside)


def test_grounding_mends_a_truncated_reply_on_retry(unruly_run):
    report, backbone, _ = unruly_run
    assert retried(backbone)["grounding"] == 1  # the truncated task memory, fed back once
    assert "task memory" not in report.assessment.incomplete


def test_observer_reads_json_inside_prose_and_fences(unruly_run):
    _, backbone, _ = unruly_run
    assert retried(backbone)["observer"] == 0  # parsed at once, no retry needed


def test_router_refuses_a_score_out_of_range_then_takes_the_mended_one(unruly_run):
    _, backbone, _ = unruly_run
    (retry,) = [r for r in backbone.requests if r.role == "router" and len(r.messages) > 2]
    assert "less than or equal to 1" in retry.messages[-1].parts[0].text


def test_specialists_mend_words_and_case_and_retry_refusals_and_unknown_types(unruly_run):
    report, backbone, _ = unruly_run
    severe = [e for e in report.events if "t=0.25s" in e.evidence]
    assert severe and severe[0].severity == 4.0  # "severe" -> 4, "Object Teleportation" mended
    feedback = [
        r.messages[-1].parts[0].text
        for r in backbone.requests
        if r.role == "specialist"
        if len(r.messages) > 2
    ]
    assert any("answer the request" in f for f in feedback)  # after the refusal
    assert any("object_levitation" in f or "Input should be" in f for f in feedback)


def test_critic_verdicts_missing_or_out_of_range_keep_the_hypothesis_unverified(unruly_run):
    """No verdict is not a rejection: the hypothesis stays an event, marked unverified, and
    the report says which critic left it so."""
    from gaze.agents.critic import NO_VERDICT

    report, _, _ = unruly_run
    assert any(NO_VERDICT in e.evidence for e in report.events)
    assert not any("no verdict" in r.reason for r in report.rejected)
    assert any("without a verdict, kept unverified" in p for p in report.assessment.incomplete)


def test_progress_with_every_other_frame_is_resampled_and_the_judge_reads_prose(unruly_run):
    report, _, _ = unruly_run
    assert report.progress.raw == [0, 0, 20, 20, 40, 40, 60, 60]
    assert report.pa.score == 4 and report.ia.score == 4
    assert "judge_failed" not in report.flags


def test_every_spoiled_reply_is_counted_and_mended_calls_are_not_gaps(unruly_run):
    report, backbone, _ = unruly_run
    assert "parse_failed" not in report.flags
    # the only gaps are verdicts the critic left out (kept unverified): every call was mended
    assert all("kept unverified" in part for part in report.assessment.incomplete)
    # each retry answers one spoiled reply: every failed request is in the manifest
    assert report.manifest.failed_requests == sum(retried(backbone).values())
    assert sum(report.manifest.calls.values()) == len(backbone.requests)


def test_scripted_unruly_from_the_command_line(capsys):
    import json

    from gaze.cli.main import run

    code = run(["diagnose", "--demo", "--model", "scripted:unruly", "--json", "--no-cache"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    report = json.loads(captured.out)
    assert report["manifest"]["models"]["specialist"] == "scripted:unruly"
    assert all(e["start_s"] < e["end_s"] for e in report["events"])
