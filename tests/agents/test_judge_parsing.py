import pytest

from gaze.agents.judges import lenient_score, one_per_second

FULL = (
    '{"reasoning": "steady grasp", "agent_consistency": 2, "scene_consistency": 1, '
    '"interaction_realism": 2, "score": 4}'
)


@pytest.mark.parametrize(
    ("text", "score"),
    [
        (FULL, 4),
        ("```json\n" + FULL + "\n```", 4),
        ("Here is my judgement:\n" + FULL + "\nThanks!", 4),
        ("4/5", 4),
        ("I would give it 3 / 5 overall.", 3),
        ("Reasoning: the cup melts. Score: 2", 2),
        ("rating = 5", 5),
        ("  1  ", 1),
    ],
)
def test_lenient_scores(text, score):
    assert lenient_score(text).score == score


def test_full_json_keeps_rationale_and_subscores():
    result = lenient_score(FULL)
    assert result.rationale == "steady grasp"
    assert result.subscores == {
        "agent_consistency": 2,
        "scene_consistency": 1,
        "interaction_realism": 2,
    }


@pytest.mark.parametrize("text", ["The clip looks fine.", '{"score": 9}', "", "score: 0"])
def test_no_usable_score_raises(text):
    with pytest.raises(ValueError):
        lenient_score(text)


def test_one_frame_per_second():
    frames = [(t / 4, bytes([i])) for i, t in enumerate(range(13))]  # 0 .. 3.0 s at 4 fps
    assert [t for t, _ in one_per_second(frames)] == [0.0, 1.0, 2.0, 3.0]
