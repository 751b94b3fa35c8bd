"""The pa_ia and progress branches end to end with scripted backbones."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from gaze.api import adiagnose
from gaze.models.scripted import ScriptedBackbone
from gaze.settings.context import GazeContext
from tests.graph.script import World, text_of


class JudgeWorld(World):
    def judge(self, request):
        if request.schema_name == "PAJudgement":
            return (
                "Reasoning: the block jumps across the table. "
                '{"reasoning": "block jumps", "agent_consistency": 2, '
                '"scene_consistency": 0, "interaction_realism": 1, "score": 2}'
            )
        return {
            "reasoning": "right block, placed",
            "agent_match": 2,
            "object_correct": 2,
            "goal_completed": 1,
            "score": 4,
        }

    def progress(self, request):
        if request.schema_name == "ProgressChange":
            return {"change": 10}
        listed = re.search(r"as\s+labelled:\s+([\d,\s]+)\)", text_of(request))[1]
        times = [int(t) for t in listed.replace(",", " ").split()]
        return {"frames": [{"time_s": t, "progress": min(100, 15 * t)} for t in times]}


@pytest.fixture
def teleport(forge_dir, forge_rows):
    row = forge_rows["object_teleportation"]
    return forge_dir / row.video, row.instruction, (row.events[0].start_s, row.events[0].end_s)


def run(clip, instruction, backbone, **settings):
    ctx = GazeContext(use_cache=False, **settings)
    return asyncio.run(adiagnose(clip, instruction, backbones={"default": backbone}, context=ctx))


def test_judges_beside_the_diagnosis(teleport):
    clip, instruction, truth = teleport
    backbone = ScriptedBackbone(JudgeWorld(truth))
    report = run(clip, instruction, backbone, sections=["diagnosis", "pa_ia", "progress"])
    assert report.pa.score == 2 and report.pa.subscores["scene_consistency"] == 0
    assert report.ia.score == 4 and report.ia.rationale == "right block, placed"
    judge_calls = backbone.calls("judge")
    pa_call = next(r for r in judge_calls if r.schema_name == "PAJudgement")
    ia_call = next(r for r in judge_calls if r.schema_name == "IAJudgement")
    assert pa_call.images == 32 and ia_call.images == 33  # PA: video only; IA: + initial frame
    assert instruction not in text_of(pa_call) and instruction in text_of(ia_call)
    curve = report.progress
    assert curve.raw == [0, 15, 30, 45, 60, 75, 90, 100]  # 8 s clip, frames at 1 fps
    assert curve.times_s == [float(i) for i in range(8)]
    assert curve.processed[0] < curve.processed[-1] <= 1.0
    assert curve.metrics["MP"] == pytest.approx(max(curve.processed))
    assert report.events and report.events[0].type == "object_teleportation"
    assert any(note.startswith("PA 2: consistent with") for note in report.consistency)
    assert report.manifest.calls["judge"] == 2 and report.manifest.calls["progress"] == 1


def test_judges_alone_make_no_diagnosis_calls(teleport):
    clip, instruction, truth = teleport
    backbone = ScriptedBackbone(JudgeWorld(truth))
    report = run(clip, instruction, backbone, sections=["pa_ia"])
    assert {r.role for r in backbone.requests} == {"judge"}
    assert report.events == [] and report.progress is None
    # a judges-only run does not claim to have diagnosed anything
    assert report.assessment.assessed == [] and len(report.assessment.not_assessed) == 6
    assert report.consistency == [
        "PA 2 but no physical or entity event was reported: the judges disagree; inspect the clip"
    ]


def test_pair_and_recorded_progress(teleport, tmp_path):
    clip, instruction, truth = teleport
    backbone = ScriptedBackbone(JudgeWorld(truth))
    pair = run(clip, instruction, backbone, sections=["progress"], progress_style="pair")
    assert pair.progress.raw == [0.0] + [10.0] * 7  # increments, accumulated when processed
    assert len(backbone.calls("progress")) == 7
    recorded = tmp_path / "curves.jsonl"
    recorded.write_text(json.dumps({"clip_id": clip.stem, "progress": [0, 0.5, 1.0]}) + "\n")
    silent = ScriptedBackbone(JudgeWorld(truth))
    report = run(
        clip,
        instruction,
        silent,
        sections=["progress"],
        progress_style="recorded",
        progress_file=str(recorded),
    )
    assert report.progress.raw == [0, 0.5, 1.0] and silent.requests == []


def test_unparseable_judge_is_flagged_without_emptying_the_diagnosis(teleport):
    clip, instruction, truth = teleport

    class Mute(JudgeWorld):
        def judge(self, request):
            return "I'd rather not say."

    report = run(
        clip,
        instruction,
        ScriptedBackbone(Mute(truth)),
        sections=["diagnosis", "pa_ia"],
        max_retries=1,
    )
    assert report.pa is None and "judge_failed" in report.flags
    assert report.events  # the diagnosis stands
    assert any(p.startswith("judge (pa)") for p in report.problems)


def test_task_progress_cross_check_against_the_curve():
    from gaze.graph.crosscheck import progress_notes
    from gaze.schema.events import Event

    curve = {"times_s": [0, 1, 2, 3, 4, 5], "processed": [0.1, 0.4, 0.6, 0.3, 0.3, 0.3]}
    drop = Event(dimension="task_progress", type="failed_grasp", start_s=2, end_s=3, severity=3)
    rise = Event(
        dimension="task_progress", type="task_incompletion", start_s=0, end_s=1.5, severity=3
    )
    flat = Event(
        dimension="task_progress", type="premature_termination", start_s=3.5, end_s=5, severity=4
    )
    notes = progress_notes([drop, rise, flat], curve)
    assert "agrees: the curve falls by 0.30" in notes[0]
    assert "disagrees: the curve rises by 0.50" in notes[1]
    assert "agrees: the curve is flat" in notes[2]


def test_progress_replies_of_the_wrong_length_are_repaired_by_their_frame_times(teleport):
    clip, instruction, truth = teleport

    class Sloppy(JudgeWorld):
        def progress(self, request):  # every other second only, as real models do
            return {"frames": [{"time_s": t, "progress": 10 * t} for t in range(0, 8, 2)]}

    report = run(clip, instruction, ScriptedBackbone(Sloppy(truth)), sections=["progress"])
    assert report.progress.raw == [0, 0, 20, 20, 40, 40, 60, 60]  # nearest named time
    assert "judge_failed" not in report.flags


def test_progress_judge_runs_on_the_minimal_scripted_model(teleport):
    clip, instruction, _ = teleport
    backbone = ScriptedBackbone(fallback_minimal=True)
    report = run(clip, instruction, backbone, sections=["progress"])
    assert "judge_failed" not in report.flags and len(report.progress.raw) == 8
    (request,) = backbone.calls("progress")
    items = request.json_schema["properties"]["frames"]
    assert items["minItems"] == items["maxItems"] == 8  # the schema fixes the count
