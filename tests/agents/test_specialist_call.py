"""One specialist call per segment: its schema has a part per routed dimension (each naming only
its own types), its prompt carries each dimension's catalogue and says which dimensions the
pixel hints are for, and its answer is read back per dimension."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from gaze.agents import specialist
from gaze.models.caller import Caller
from gaze.models.scripted import ScriptedBackbone
from tests.graph.script import text_of

SEGMENT = {"id": "seg1", "start_s": 4.0, "end_s": 12.0, "windows": [1, 2]}


def _hypothesis(kind: str, start: float = 5.0) -> dict:
    return {
        "type": kind,
        "start_s": start,
        "end_s": start + 1.0,
        "explanation": "e",
        "evidence": [],
        "objects": [],
        "severity": "severe",
        "confidence": 0.5,
    }


def _examine(dimensions: list[str], reply) -> tuple[object, ScriptedBackbone]:
    backbone = ScriptedBackbone({"specialist": [reply]})
    result = asyncio.run(
        specialist.examine(
            Caller({"default": backbone}),
            dimensions=dimensions,
            instruction="put the block on the plate",
            segment=SEGMENT,
            frames=[(4.0, b"jpeg")],
            task_memory=None,
            scene_memory=None,
            observations="(none)",
            pixel_hints="- 5.00-5.10 s blur: soft",
            max_retries=0,
        )
    )
    return result, backbone


def test_one_call_answers_every_routed_dimension_in_its_own_part():
    reply = {
        "physical_plausibility": {"hypotheses": [_hypothesis("Object Teleportation")]},
        "task_progress": {"hypotheses": []},
    }
    result, backbone = _examine(["physical_plausibility", "task_progress"], reply)
    (request,) = backbone.requests
    assert list(request.json_schema["properties"]) == ["physical_plausibility", "task_progress"]
    text = text_of(request)
    assert "Dimension physical_plausibility:" in text and "Dimension task_progress:" in text
    assert "(for physical_plausibility)\n- 5.00-5.10 s blur" in text
    found, problems = specialist.to_hypotheses(
        result.value.physical_plausibility, "physical_plausibility", SEGMENT, 20.0
    )
    assert [(h["type"], h["severity"], h["id"]) for h in found] == [
        ("object_teleportation", 4, "seg1:physical_plausibility:0")
    ]
    assert problems == [] and result.value.task_progress.hypotheses == []


def test_each_part_names_only_its_own_dimensions_types():
    model = specialist.segment_model(("task_progress", "visual_quality"))
    with pytest.raises(ValidationError):
        model.model_validate(
            {
                "task_progress": {"hypotheses": [_hypothesis("blur") | {"severity": 2}]},
                "visual_quality": {"hypotheses": []},
            }
        )


def test_no_hints_for_dimensions_pixels_do_not_measure():
    result, backbone = _examine(["task_progress"], {"task_progress": {"hypotheses": []}})
    assert "(none for these dimensions)" in text_of(backbone.requests[0])
    assert result.value is not None


def test_a_lone_dimensions_answer_without_its_key_is_put_under_it():
    result, _ = _examine(["task_progress"], {"hypotheses": []})
    assert result.value is not None and result.value.task_progress.hypotheses == []
    result, _ = _examine(["task_progress", "visual_quality"], {"hypotheses": []})
    assert result.value is None  # with two dimensions it is not clear whose it is
