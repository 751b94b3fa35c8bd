"""Routers, alignment and the critic's accept/merge rules are pure: tested without a model."""

from __future__ import annotations

import pytest

from gaze.agents.critic import Verdict, merge, temporal_iou, verify
from gaze.agents.router import route
from gaze.graph.observing import observer_groups
from gaze.graph.segments import align_segments, split_span
from gaze.settings.context import GazeContext
from gaze.video.windows import Window

WINDOWS = [{"index": i, "start_s": 4.0 * i, "end_s": 4.0 * i + 4} for i in range(5)]


def obs(window: int, *statuses: tuple[str, str]) -> dict:
    return {
        "window": window,
        "subtask_status": [{"subtask_id": s, "status": st, "times_s": []} for s, st in statuses],
    }


def test_route_takes_top_k_with_codebook_order_breaking_ties():
    scores = {"visual_quality": 0.9, "task_progress": 0.5, "robot_body_consistency": 0.5}
    assert route(scores, 2) == ["visual_quality", "task_progress"]
    assert route({}, 3) == ["task_progress", "instruction_consistency", "object_scene_consistency"]
    assert len(route(scores, 10)) == 6 and route(scores, 0) == []


def test_segments_follow_subtasks_and_cover_unclaimed_windows():
    observations = [
        obs(0, ("s1", "in_progress")),
        obs(1, ("s1", "completed"), ("s2", "in_progress")),
        obs(2, ("s2", "failed")),
        obs(3, ("s2", "not_visible")),
        obs(4),
    ]
    segments = align_segments(WINDOWS, observations, ["s1", "s2"], max_windows=2)
    assert [(s["subtask_id"], s["windows"], s["start_s"], s["end_s"]) for s in segments] == [
        ("s1", [0, 1], 0.0, 8.0),
        ("s2", [1, 2], 4.0, 12.0),
        (None, [3, 4], 12.0, 20.0),
    ]
    assert [s["id"] for s in segments] == ["seg0", "seg1", "seg2"]


def test_long_spans_are_split_and_no_subtasks_means_window_runs():
    segments = align_segments(WINDOWS, [], [], max_windows=2)
    assert [s["windows"] for s in segments] == [[0, 1], [2, 3], [4]]
    assert all(s["subtask_id"] is None for s in segments)


def test_spans_split_on_the_observers_groups_when_that_adds_no_segment_or_spares_a_group():
    assert split_span([3, 4, 5], 2) == [[3], [4, 5]]  # as many segments as [3, 4], [5]
    assert split_span([3, 4], 2) == [[3, 4]]  # one group's length: aligned would make two
    # longer than a group: one more segment, and [4, 5] and [6] are the observers' prefixes
    assert split_span([3, 4, 5, 6], 2) == [[3], [4, 5], [6]]
    assert split_span(list(range(6, 45)), 4)[:2] == [[6, 7], [8, 9, 10, 11]]
    assert split_span([0, 1, 2, 3, 4], 2) == [[0, 1], [2, 3], [4]]
    assert split_span([5], 2) == [[5]] and split_span([], 2) == []
    assert split_span([1, 2, 3, 4], 3) == [[1, 2], [3, 4]]
    assert split_span([1, 2, 3], 1) == [[1], [2], [3]]


def _window(index: int, frames: int = 16) -> Window:
    return Window(index, 4.0 * index, 4.0 * index + 4, list(range(frames)), [0.0] * frames)


def _indices(groups) -> list[tuple[int, ...]]:
    return [tuple(w.index for w in g) for g in groups]


def test_observers_see_the_windows_segments_examine():
    windows = [_window(i) for i in range(5)]
    # by default a segment is four windows of 16 frames, which one call carries whole
    assert _indices(observer_groups(windows, GazeContext())) == [(0, 1, 2, 3), (4,)]
    ctx = GazeContext(max_segment_windows=2, max_frames_per_call=32)
    assert _indices(observer_groups(windows, ctx)) == [(0, 1), (2, 3), (4,)]
    # pairs start on even windows: a window without its partner is seen alone
    assert _indices(observer_groups(windows[1:4], ctx)) == [(1,), (2, 3)]
    assert _indices(observer_groups(windows, GazeContext(segment_observers=False))) == [
        (i,) for i in range(5)
    ]
    # the group must fit one call
    too_many = GazeContext(max_segment_windows=2, max_frames_per_call=31)
    assert _indices(observer_groups(windows[:2], too_many)) == [(0,), (1,)]
    # groups are as long as segments, aligned as split_span aligns them
    fours = GazeContext(max_segment_windows=4, max_frames_per_call=64)
    assert _indices(observer_groups(windows, fours)) == [(0, 1, 2, 3), (4,)]
    assert _indices(observer_groups(windows[2:], fours)) == [(2, 3), (4,)]
    assert [[w.index for w in g] for g in observer_groups(windows, fours)] == split_span(
        list(range(5)), 4
    )
    threes = GazeContext(max_segment_windows=3, max_frames_per_call=32)  # 48 do not fit 32
    assert _indices(observer_groups(windows[:3], threes)) == [(0,), (1,), (2,)]
    grids = GazeContext(grid=True, max_frames_per_call=2)  # each window sent as one image
    assert _indices(observer_groups(windows[:2], grids)) == [(0, 1)]


def hyp(i: int, kind: str, start: float, end: float, objects=("block",), conf=0.8, dim=None):
    return {
        "id": f"h{i}",
        "segment_id": "seg0",
        "dimension": dim or "physical_plausibility",
        "type": kind,
        "start_s": start,
        "end_s": end,
        "explanation": f"h{i}",
        "evidence": [f"e{i}"],
        "objects": list(objects),
        "severity": 3,
        "confidence": conf,
    }


def test_verify_applies_decision_and_threshold_and_rejects_the_unjudged():
    hs = [
        hyp(0, "object_floating", 1, 2),
        hyp(1, "object_floating", 3, 4),
        hyp(2, "object_floating", 5, 6),
        hyp(3, "object_floating", 7, 8),
    ]
    verdicts = [
        Verdict(index=0, decision="accept", reason="seen", confidence=0.7),
        Verdict(index=1, decision="accept", reason="weak", confidence=0.4),
        Verdict(index=2, decision="reject", reason="occlusion", confidence=0.9),
    ]
    accepted, rejected, unverified = verify(hs, verdicts, threshold=0.5)
    assert [h["id"] for h in accepted] == ["h0"] and accepted[0]["confidence"] == 0.7
    assert [(h["id"], h["reason"]) for h in rejected] == [
        ("h1", "confidence 0.40 below 0.5: weak"),
        ("h2", "occlusion"),
    ]
    # no verdict is not a rejection: kept with its own confidence, marked unverified
    assert [(h["id"], h["confidence"]) for h in unverified] == [("h3", hs[3]["confidence"])]
    assert unverified[0]["evidence"][-1] == "unverified: the critic gave no verdict"


def test_temporal_iou_widens_instants():
    assert temporal_iou({"start_s": 0, "end_s": 2}, {"start_s": 1, "end_s": 3}) == pytest.approx(
        1 / 3
    )
    assert temporal_iou({"start_s": 1.0, "end_s": 1.0}, {"start_s": 1.0, "end_s": 1.1}) > 0.6
    assert temporal_iou({"start_s": 0, "end_s": 1}, {"start_s": 2, "end_s": 3}) == 0.0


def test_merge_groups_same_event_and_keeps_distinct_ones():
    a = hyp(0, "object_teleportation", 2.0, 2.1, conf=0.9)
    b = hyp(1, "object_disappearance", 2.0, 2.1, conf=0.7, dim="object_scene_consistency")
    c = hyp(
        2,
        "object_disappearance",
        2.0,
        2.1,
        objects=("plate",),
        conf=0.6,
        dim="object_scene_consistency",
    )  # other object, other type: separate
    d = hyp(3, "object_teleportation", 6.0, 6.5)  # same type, far away: separate
    events = merge([a, b, c, d], iou=0.6)
    assert [(e.type, e.start_s, e.dimensions) for e in events] == [
        ("object_disappearance", 2.0, ["object_scene_consistency"]),  # the plate's
        ("object_teleportation", 2.0, ["physical_plausibility", "object_scene_consistency"]),
        ("object_teleportation", 6.0, ["physical_plausibility"]),
    ]
    assert events[1].evidence[-1].startswith("merged 2 hypotheses")


def test_merge_respects_the_iou_threshold():
    a = hyp(0, "object_floating", 0.0, 2.0)
    b = hyp(1, "object_floating", 1.0, 3.0)  # IoU 1/3
    assert len(merge([a, b], iou=0.6)) == 2
    assert len(merge([a, b], iou=0.3)) == 1


def test_an_events_intervals_and_boxes_survive_the_critics_merge():
    """A pixel event with several intervals and a box keeps both through hypothesis, verdict and
    merge (they once reached the report only in pixel-only runs)."""
    from gaze.graph.critic_node import pixel_hypotheses

    region = {"t_s": 2.0, "box": [0.1, 0.2, 0.3, 0.4], "label": "changed region"}
    event = {
        "dimension": "visual_quality",
        "type": "frame_corruption",
        "start_s": 1.0,
        "end_s": 4.0,
        "severity": 3.0,
        "description": "two glitches",
        "evidence": ["frame_diff 40"],
        "confidence": 0.8,
        "regions": [region],
        "spans": [[1.0, 1.2], [3.8, 4.0]],
    }
    segment = {"id": "s0", "subtask_id": None, "start_s": 0.0, "end_s": 8.0, "windows": [0, 1]}
    (found,) = pixel_hypotheses([event], [segment])
    assert found["spans"] == [[1.0, 1.2], [3.8, 4.0]] and found["regions"] == [region]
    overlapping = hyp(1, "frame_corruption", 1.1, 1.6, dim="visual_quality")
    (merged,) = merge([found, overlapping], iou=0.0)
    assert merged.spans == [(1.0, 1.6), (3.8, 4.0)]
    assert [r.label for r in merged.regions] == ["changed region"]
