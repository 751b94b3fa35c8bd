"""One router call scores every segment of the clip: the answer must name each segment once;
a lone segment's bare scores are put under it; what is missing or unknown is fed back."""

from __future__ import annotations

import asyncio

import pytest

from gaze.agents import router
from gaze.models.caller import Caller
from gaze.models.scripted import ScriptedBackbone

SCORES = [{"dimension": "visual_quality", "relevance": 0.8, "reason": "soft"}]


def test_every_segment_gets_one_entry_in_order():
    data = {"segments": [{"segment_id": s, "scores": SCORES} for s in ("seg1", "seg0")]}
    output = router.read_scores(data, ["seg0", "seg1"])
    assert [s.segment_id for s in output.segments] == ["seg0", "seg1"]
    assert [router.scores_of(s) for s in output.segments] == [{"visual_quality": 0.8}] * 2
    # left out: scored with nothing, as an empty score list is (codebook order decides)
    (_, left_out) = router.read_scores(
        {"segments": data["segments"][1:]}, ["seg0", "seg1"]
    ).segments
    assert left_out.segment_id == "seg1" and left_out.scores == []
    assert router.route(router.scores_of(left_out), 2) == [
        "task_progress",
        "instruction_consistency",
    ]
    # a segment the clip does not have, and a second entry for one, are dropped
    twice = {"segment_id": "seg0", "scores": []}
    extra = {"segments": [*data["segments"], {"segment_id": "seg7", "scores": SCORES}, twice]}
    output = router.read_scores(extra, ["seg0", "seg1"])
    assert [(s.segment_id, len(s.scores)) for s in output.segments] == [("seg0", 1), ("seg1", 1)]


def test_a_lone_segments_bare_scores_are_its_own():
    output = router.read_scores({"scores": SCORES}, ["seg0"])
    assert output.segments[0].segment_id == "seg0"
    with pytest.raises(ValueError):
        router.read_scores({"scores": SCORES}, ["seg0", "seg1"])


def test_one_call_scores_the_whole_clip():
    segments = [
        ({"id": f"seg{i}", "start_s": 4.0 * i, "end_s": 4.0 * i + 4, "windows": [i]}, f"obs {i}")
        for i in range(3)
    ]
    full = {"segments": [{"segment_id": f"seg{i}", "scores": SCORES} for i in range(3)]}
    backbone = ScriptedBackbone({"router": [full]})
    result = asyncio.run(
        router.score_segments(Caller({"default": backbone}), "stack", segments, max_retries=1)
    )
    assert result.value is not None and len(result.value.segments) == 3
    (asked,) = backbone.requests
    text = asked.messages[0].parts[0].text
    assert all(f"Segment seg{i} (" in text and f"obs {i}" in text for i in range(3))
