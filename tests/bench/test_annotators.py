"""Two annotators against each other, on a fixture whose alpha, kappa and IoU are worked by hand
(the arithmetic is in the comments), and the command's output file and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gaze.bench.annotators import annotator_agreement
from gaze.cli.main import run
from gaze.metrics.reliability import alpha_nominal, coincidences, kappa
from tests.cli.test_cli import one_line_error


def event(kind: str, start: float, end: float) -> dict:
    return {
        "dimension": "object_scene_consistency" if kind.startswith("object") else "visual_quality",
        "type": kind,
        "start_s": start,
        "end_s": end,
        "severity": 3,
        "description": kind,
        "evidence": [],
    }


A, B = "object_disappearance", "blur"  # two types, "a" and "b" below


def manifest(path, clips: dict[str, list[dict]]) -> str:
    rows = [
        {
            "clip_id": clip,
            "video": f"{clip}.mp4",
            "instruction": "put the cup on the plate",
            "fps": 10,
            "duration_s": 5.0,
            "events": events,
        }
        for clip, events in clips.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture
def two_annotators(tmp_path):
    first = manifest(
        tmp_path / "a.jsonl",
        {
            "c1": [event(A, 0.0, 1.0)],  # both: a, same span -> pair (a, a), IoU 1
            "c2": [event(A, 0.0, 2.0)],  # frames 0-20 vs 10-20: IoU 11/21, pair (a, b)
            "c3": [event(B, 0.0, 1.0)],  # only A: unit (b, none)
            "c4": [],  # both clean
            "c5": [],  # only B: unit (none, a)
            "c6": [],  # only in A's file
        },
    )
    second = manifest(
        tmp_path / "b.jsonl",
        {
            "c1": [event(A, 0.0, 1.0)],
            "c2": [event(B, 1.0, 2.0)],
            "c3": [],
            "c4": [],
            "c5": [event(A, 2.0, 3.0)],
        },
    )
    return first, second


def test_agreement_equals_the_hand_worked_figures(two_annotators):
    result = annotator_agreement(*two_annotators, n_boot=0)
    # units (a,a) (a,b) (b,none) (none,a): o_aa = 2, o_ab = o_ba = o_bn = o_nb = o_an = o_na = 1
    # n_a = 4, n_b = 2, n_none = 2, n = 8; disagreeing coincidences 6;
    # sum over c != k of n_c n_k = 2 (4*2 + 4*2 + 2*2) = 40; alpha = 1 - 7 * 6 / 40 = -0.05
    assert result["type_alpha"] == pytest.approx(-0.05)
    # pairs only: (a,a) (a,b): n_a = 3, n_b = 1, n = 4; alpha = 1 - 3 * 2 / (2 * 3 * 1) = 0
    assert result["type_alpha_paired"] == pytest.approx(0.0)
    assert result["temporal_iou"] == pytest.approx((1.0 + 11 / 21) / 2)
    assert result["event_f1"] == pytest.approx(2 * 2 / (3 + 3))
    # clean calls over c1-c5: A (F F F T T), B (F F T T F); p_o = 3/5, p_e = .4*.4 + .6*.6 = .52
    assert result["clean_kappa"] == pytest.approx((0.6 - 0.52) / 0.48)
    assert result["n_clips"] == 5 and result["only_in_first"] == ["c6"]
    assert result["n_pairs"] == 2 and result["n_events_a"] == 3 and result["n_events_b"] == 3


def test_identical_annotators_agree_fully_and_intervals_hold_the_figure(two_annotators, tmp_path):
    first, _ = two_annotators
    same = annotator_agreement(first, first, n_boot=200, seed=1)
    assert same["type_alpha"] == same["type_alpha_paired"] == 1.0
    assert same["temporal_iou"] == same["event_f1"] == same["clean_kappa"] == 1.0
    result = annotator_agreement(*two_annotators, n_boot=500, seed=3)
    low, high = result["ci"]["temporal_iou"]
    assert low <= result["temporal_iou"] <= high and low < high


def test_reliability_formulas_on_textbook_tables():
    # Cohen's kappa, a 2x2 table with p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5: kappa 0.4
    assert kappa(np.array([[20.0, 5.0], [10.0, 15.0]])) == pytest.approx(0.4)
    assert kappa(np.array([[5.0, 0.0], [0.0, 0.0]])) is None  # one category: chance is certain
    # one category everywhere: alpha undefined, not 1
    assert alpha_nominal(coincidences([("a", "a")] * 3, ["a", "b"])) is None


def test_the_command_writes_a_stamped_file_and_bad_input_is_one_line(
    two_annotators, tmp_path, capsys
):
    out = tmp_path / "agree.json"
    assert (
        run(["bench", "annotators", *two_annotators, "--out", str(out), "--bootstrap", "50"]) == 0
    )
    written = json.loads(out.read_text())
    assert written["kind"] == "annotators" and written["format"] == 1
    assert written["type_alpha"] == pytest.approx(-0.05)
    printed = capsys.readouterr()
    assert "type_alpha" in printed.out and "1 clip(s) only in" in printed.err
    other = manifest(tmp_path / "other.jsonl", {"zz": []})
    assert run(["bench", "annotators", two_annotators[0], other, "--out", str(out)]) == 2
    assert "no clip id in common" in one_line_error(capsys.readouterr().err)
