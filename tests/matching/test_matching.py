"""Matching protocols against hand-computed cases, and their properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gaze.bench.score_cases import ClipCase, score_cases
from gaze.matching import glide, robogaze
from gaze.matching.similarity import LexicalJudge, TableJudge
from gaze.matching.spans import continuous_iou, frame_iou, frame_range
from gaze.schema.events import Event
from gaze.schema.manifest import ManifestClip


def spans(*pairs):
    return np.array([p[0] for p in pairs], float), np.array([p[1] for p in pairs], float)


def test_frame_ranges_follow_the_definition():
    # [0.25, 0.55] at 10 fps covers frames 3, 4, 5 (0.3, 0.4, 0.5); boundaries count
    first, last = frame_range(*spans((0.25, 0.55), (0.3, 0.3), (0.31, 0.34), (0.0, 0.0)), 10)
    assert first.tolist() == [3, 3, 3, 0] and last.tolist() == [5, 3, 3, 0]
    # a span between frames covers the frame nearest its midpoint (0.325 * 10 = 3.25 -> 3)
    # and 0.35-0.35 sits on a half: rounded up to frame 4
    first, last = frame_range(*spans((0.35, 0.35), (0.36, 0.38)), 10)
    assert first.tolist() == [4, 4]
    # times kept to 6 decimals still land on their frames: 37/24 and 38/24 s at 24 fps
    first, last = frame_range(*spans((1.541667, 1.583333), (1.5, 1.583333)), 24)
    assert first.tolist() == [37, 36] and last.tolist() == [38, 38]


def test_frame_iou_hand_computed():
    # A = frames 0..9 (0-0.9 s), B = frames 5..14: |A∩B| = 5, |A∪B| = 15
    iou = frame_iou(spans((0.0, 0.9)), spans((0.5, 1.4), (2.0, 3.0)), 10)
    assert iou[0, 0] == pytest.approx(5 / 15) and iou[0, 1] == 0.0


def test_continuous_iou_hand_computed():
    iou = continuous_iou(spans((0.0, 2.0), (1.0, 1.0)), spans((1.0, 3.0)))
    assert iou[0, 0] == pytest.approx(1 / 3) and iou[1, 0] == 0.0


def event(
    dim="physical_plausibility",
    kind="object_floating",
    start=0.0,
    end=1.0,
    sev=3.0,
    desc="the red block floats above the table",
):
    return Event(dimension=dim, type=kind, start_s=start, end_s=end, severity=sev, description=desc)


def case(refs, preds, clip_id="c", fps=10.0, condition=None, generator="g"):
    row = ManifestClip(
        clip_id=clip_id,
        video=f"{clip_id}.mp4",
        instruction="pick",
        fps=fps,
        duration_s=10.0,
        events=refs,
        condition_id=condition or clip_id,
        generator=generator,
    )
    return ClipCase(row, preds, True)


class ConstJudge:
    name = "const"
    reads = "description"

    def __init__(self, value=1.0):
        self.value = value
        self.asked = []

    def score(self, pairs):
        self.asked += list(pairs)
        return np.full(len(pairs), self.value)


def test_robogaze_clip_hand_computed():
    refs = [
        event(start=0.0, end=0.9, sev=4),
        event(dim="visual_quality", kind="blur", start=5.0, end=5.9, desc="frames blur"),
    ]
    preds = [
        event(start=0.5, end=1.4, sev=2),  # IoU 1/3 with ref 0, same dimension
        event(dim="visual_quality", kind="blur", start=8.0, end=9.0),
    ]  # no overlap
    judge = ConstJudge(0.6)
    out = score_cases([case(refs, preds)], "robogaze", judge, n_boot=0)
    assert judge.asked == [(preds[0].description, refs[0].description)]  # only IoU > 0 pairs
    clip = out["per_clip"][0]
    assert clip["matched"] == [{"pred": 0, "ref": 0, "s": 0.6, "iou": pytest.approx(1 / 3)}]
    assert clip["unmatched_pred"] == [1] and clip["unmatched_ref"] == [1]
    p = r = 0.6 / 2
    assert out["precision"] == pytest.approx(p) and out["recall"] == pytest.approx(r)
    assert out["description_f1"] == pytest.approx(p)
    assert out["f1_x_iou"] == pytest.approx(0.6 / 3 / 2, abs=1e-6)
    assert out["temporal_miou"] == pytest.approx(1 / 3)
    assert out["severe_event_recall"] == 1.0  # the severity-4 reference was matched
    assert out["sev_at_1"] == 0.0  # |2 - 4| > 1


def test_hungarian_prefers_the_same_dimension_and_maximises_total_cost():
    refs = [
        event(start=0, end=1, desc="x"),
        event(
            dim="object_scene_consistency", kind="object_disappearance", start=0, end=1, desc="y"
        ),
    ]
    preds = [
        event(dim="object_scene_consistency", kind="object_disappearance", start=0, end=1, desc="y")
    ]
    result = robogaze.match(
        np.ones((1, 2)), np.ones((1, 2)), [p.dimension for p in preds], [r.dimension for r in refs]
    )
    assert result.pairs == [(0, 1)] and result.unmatched_ref == [0]


def test_zero_cost_pairs_are_never_matched():
    result = robogaze.match(np.array([[0.5]]), np.array([[0.0]]), ["a"], ["a"])
    assert result.pairs == [] and result.unmatched_pred == [0] and result.unmatched_ref == [0]


def test_clean_accuracy_and_fractional_severity():
    clean_ok = case([], [], "a")
    clean_bad = case([], [event()], "b")
    severe = case([event(sev=3.5)], [], "c")
    out = score_cases([clean_ok, clean_bad, severe], "robogaze", ConstJudge(), n_boot=0)
    assert out["clean_accuracy"] == 0.5
    assert out["severe_event_recall"] == 0.0  # 3.5 rounds up to 4: a missed severe event
    assert out["n_event_clips"] == 1 and out["n_clean_clips"] == 2
    assert out["sev_at_1"] is None  # no matched pair anywhere


def test_glide_keeps_every_hungarian_pair_and_pools():
    refs = [event(start=0, end=2), event(start=4, end=5)]
    preds = [event(start=1, end=3), event(start=8, end=9), event(start=4, end=5)]
    result = glide.match(
        np.array([[5.0, 0.0], [0.0, 0.0], [0.0, 4.0]]),
        continuous_iou(spans((1, 3), (8, 9), (4, 5)), spans((0, 2), (4, 5))),
    )
    assert sorted(result.pairs) == [(0, 0), (2, 1)]
    out = score_cases(
        [case(refs, preds, "a"), case([], [event()], "b")], "glide", ConstJudge(1.0), n_boot=0
    )
    # ratings 5 per pair (a [0,1] judge's 1 counts as 5): two pairs in clip a, none in b
    assert out["precision"] == pytest.approx(10 / (5 * 4))
    assert out["recall"] == pytest.approx(10 / (5 * 2))
    # ratings tie (5 each): the tie goes to the larger IoU, (1,3)-(0,2) 1/3 and (4,5)-(4,5) 1
    assert out["temporal_miou"] == pytest.approx((1 / 3 + 1.0) / 2)


def test_table_judge_replays_and_names_a_missing_pair(tmp_path):
    table = tmp_path / "t.jsonl"
    table.write_text('{"a": "p1", "b": "r1", "s": 0.25}\n')
    judge = TableJudge(table)
    assert judge.score([("p1", "r1")]).tolist() == [0.25]
    from gaze.errors import GazeInputError

    with pytest.raises(GazeInputError, match="predicted 'p2' vs reference 'r1'"):
        judge.score([("p1", "r1"), ("p2", "r1")])
    table.write_text('{"a": "p1", "b": "r1", "s": 2}\n')
    with pytest.raises(GazeInputError, match="not in"):
        TableJudge(table)


def test_lexical_judge():
    judge = LexicalJudge()
    same, other, empty = judge.score(
        [("The red block floats", "red block floats!"), ("red block", "dark frames"), ("", "x")]
    )
    assert same == 1.0 and other == 0.0 and empty == 0.0


# -- properties ------------------------------------------------------------------------------

events_strategy = st.lists(
    st.tuples(
        st.floats(0, 9, allow_nan=False),
        st.floats(0, 1, allow_nan=False),
        st.sampled_from(["object_floating", "blur", "object_disappearance"]),
        st.sampled_from(["red block", "blue cup", "dark frames", "gripper"]),
    ),
    min_size=0,
    max_size=4,
)

DIM = {
    "object_floating": "physical_plausibility",
    "blur": "visual_quality",
    "object_disappearance": "object_scene_consistency",
}


def to_events(items):
    return [
        Event(
            dimension=DIM[k], type=k, start_s=s, end_s=s + d, severity=3, description=f"{desc} {k}"
        )
        for s, d, k, desc in items
    ]


@settings(max_examples=60, deadline=None)
@given(events_strategy)
def test_a_set_matched_against_itself_is_perfect(items):
    evs = to_events(items)
    out = score_cases([case(evs, list(evs))], "robogaze", LexicalJudge(), n_boot=0)
    if evs:
        assert out["description_f1"] == pytest.approx(1.0)
        assert out["temporal_miou"] == pytest.approx(1.0)
    else:
        assert out["clean_accuracy"] == 1.0


@settings(max_examples=60, deadline=None)
@given(events_strategy, events_strategy, st.randoms(use_true_random=False))
def test_order_of_events_changes_nothing(ref_items, pred_items, rnd):
    refs, preds = to_events(ref_items), to_events(pred_items)
    shuffled_refs, shuffled_preds = list(refs), list(preds)
    rnd.shuffle(shuffled_refs)
    rnd.shuffle(shuffled_preds)
    a = score_cases([case(refs, preds)], "robogaze", LexicalJudge(), n_boot=0)
    b = score_cases([case(shuffled_refs, shuffled_preds)], "robogaze", LexicalJudge(), n_boot=0)
    for key in ("description_f1", "precision", "recall", "f1_x_iou", "temporal_miou"):
        assert a[key] == pytest.approx(b[key])


@settings(max_examples=60, deadline=None)
@given(events_strategy, events_strategy)
def test_an_extra_unmatched_prediction_never_raises_precision(ref_items, pred_items):
    refs, preds = to_events(ref_items), to_events(pred_items)
    extra = Event(
        dimension="robot_body_consistency",
        type="missing_robot_part",
        start_s=20.0,
        end_s=21.0,
        severity=2,
        description="zzz qqq",
    )
    before = score_cases([case(refs, preds)], "robogaze", LexicalJudge(), n_boot=0)
    after = score_cases([case(refs, [*preds, extra])], "robogaze", LexicalJudge(), n_boot=0)
    assert (after["precision"] or 0) <= (before["precision"] or 0) + 1e-12


def test_a_tie_on_the_cost_goes_to_the_larger_similarity_whatever_the_order():
    # both assignments cost 1.0 in C; the diagonal has S = 1 + 1, the other 0.5 + 0.5
    iou = np.array([[0.5, 1.0], [1.0, 0.5]])
    sim = np.array([[1.0, 0.5], [0.5, 1.0]])
    dims = ["physical_plausibility"] * 2
    straight = robogaze.match(iou, sim, dims, dims, ["p0", "p1"], ["r0", "r1"])
    swapped = robogaze.match(iou[::-1], sim[::-1], dims, dims, ["p1", "p0"], ["r0", "r1"])
    assert sorted(straight.pairs) == [(0, 0), (1, 1)]
    assert sorted(swapped.pairs) == [(0, 1), (1, 0)]  # the same events, listed the other way
    for result in (straight, swapped):
        assert robogaze.clip_scores(result, 2, 2).f1 == pytest.approx(1.0)


tied_values = st.sampled_from([0.0, 0.5, 1.0])


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.integers(1, 4).flatmap(
            lambda m: st.tuples(
                st.lists(st.lists(tied_values, min_size=m, max_size=m), min_size=n, max_size=n),
                st.lists(st.lists(tied_values, min_size=m, max_size=m), min_size=n, max_size=n),
                st.permutations(range(n)),
                st.permutations(range(m)),
            )
        )
    )
)
def test_matching_with_many_ties_does_not_depend_on_event_order(data):
    iou_rows, sim_rows, row_order, col_order = data
    iou, sim = np.array(iou_rows), np.array(sim_rows)
    n, m = iou.shape
    dims_p, dims_r = ["visual_quality"] * n, ["visual_quality"] * m
    keys_p, keys_r = [f"p{i}" for i in range(n)], [f"r{j}" for j in range(m)]
    first = robogaze.match(iou, sim, dims_p, dims_r, keys_p, keys_r)
    rows, cols = list(row_order), list(col_order)
    again = robogaze.match(
        iou[np.ix_(rows, cols)],
        sim[np.ix_(rows, cols)],
        dims_p,
        dims_r,
        [keys_p[i] for i in rows],
        [keys_r[j] for j in cols],
    )
    named = {(keys_p[i], keys_r[j]) for i, j in first.pairs}
    renamed = {(keys_p[rows[i]], keys_r[cols[j]]) for i, j in again.pairs}
    assert named == renamed
    rating_first = glide.match(5 * sim, iou, keys_p, keys_r)
    rating_again = glide.match(
        5 * sim[np.ix_(rows, cols)],
        iou[np.ix_(rows, cols)],
        [keys_p[i] for i in rows],
        [keys_r[j] for j in cols],
    )
    assert {(keys_p[i], keys_r[j]) for i, j in rating_first.pairs} == {
        (keys_p[rows[i]], keys_r[cols[j]]) for i, j in rating_again.pairs
    }


def test_dimension_slices_come_from_the_one_matching():
    # a visual-quality prediction matches a physical-plausibility reference (same span, S = 1):
    # the pair counts toward the prediction's dimension's precision and the reference's recall
    refs = [event(start=0.0, end=1.0), event("visual_quality", "blur", 5.0, 6.0, desc="soft")]
    preds = [
        event("visual_quality", "blur", 0.0, 1.0),
        event("visual_quality", "blur", 5.0, 6.0, desc="soft"),
    ]
    out = score_cases([case(refs, preds)], "robogaze", ConstJudge(1.0), n_boot=0)
    physical = out["slices"]["dimension"]["physical_plausibility"]
    visual = out["slices"]["dimension"]["visual_quality"]
    assert physical["recall"] == 1.0 and physical["precision"] == 0.0
    assert visual["precision"] == 1.0 and visual["recall"] == 1.0  # 2 of 2 preds, 1 of 1 ref
    assert out["recall"] == 1.0 and out["precision"] == 1.0  # the headline, from the same pairs
    glide_out = score_cases([case(refs, preds)], "glide", ConstJudge(1.0), n_boot=0)
    assert glide_out["slices"]["dimension"]["physical_plausibility"]["recall"] == 1.0


def test_type_judge_compares_types_not_words():
    from gaze.matching.similarity import TypeJudge, make_judge

    judge = make_judge("type")
    assert isinstance(judge, TypeJudge) and judge.reads == "type"
    assert list(judge.score([("blur", "blur"), ("blur", "low_visibility")])) == [1.0, 0.0]
    ref = Event(
        dimension="visual_quality",
        type="blur",
        start_s=1,
        end_s=2,
        severity=2,
        description="the camera image goes soft",
    )
    pred = ref.model_copy(update={"description": "edges cannot be made out", "confidence": 0.5})
    by_type = score_cases([case([ref], [pred])], "robogaze", judge, n_boot=0)
    by_words = score_cases([case([ref], [pred])], "robogaze", LexicalJudge(), n_boot=0)
    assert by_type["description_f1"] == 1.0 and by_words["description_f1"] == 0.0


def test_interval_sets_overlap_by_frames_or_by_time():
    """A peer's bug over several intervals: frames covered by any interval (robogaze), merged
    time (glide). Worked by hand at 10 fps: {1.0-1.2, 2.0-2.1} covers frames 10-12 and 20-21;
    1.1-2.0 covers 11-20: 3 shared frames of 12 covered."""
    from gaze.matching.spans import interval_set_iou

    pred, ref = [(1.1, 2.0)], [(1.0, 1.2), (2.0, 2.1)]
    assert interval_set_iou(pred, ref, 10.0) == 3 / 12
    # time: overlap 0.1 + 0 = 0.1; union 0.9 + 0.3 - 0.1 = 1.1
    assert abs(interval_set_iou(pred, ref, None) - 0.1 / 1.1) < 1e-12
    assert interval_set_iou([(2.0, 2.0)], [(2.0, 2.0)], None) == 0.0  # two instants


def test_untyped_references_render_without_invented_values():
    from gaze.report.html import references_html
    from gaze.report.svg import TimeAxis, timeline_svg
    from gaze.schema.events import ScoringEvent

    bug = ScoringEvent(
        start_s=1.0, end_s=4.0, spans=[(1.0, 2.0), (3.0, 4.0)], description="car floats"
    )
    page = references_html([bug])
    assert "untyped" in page and "severity —" in page and "car floats" in page
    svg = timeline_svg([], [], TimeAxis(10.0), references=[bug])
    assert "untyped 1.00-4.00 s, severity —" in svg
