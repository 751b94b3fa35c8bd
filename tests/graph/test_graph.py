"""The whole diagnosis graph with the scripted backbone on a forge clip: events, spans, the
critic's rejections and merges, routing, parse failures, ablations, cache."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from gaze.api import adiagnose
from gaze.settings.context import GazeContext
from tests.graph.script import routed, scripted_world, text_of


@pytest.fixture
def teleport(forge_dir, forge_rows):
    row = forge_rows["object_teleportation"]
    truth = row.events[0]
    return forge_dir / row.video, row.instruction, (truth.start_s, truth.end_s)


def run(clip, instruction, backbone, **settings: Any):
    context = GazeContext(use_cache=settings.pop("use_cache", False), **settings)
    return asyncio.run(
        adiagnose(clip, instruction, backbones={"default": backbone}, context=context)
    )


def calls_by_role(backbone) -> Counter:
    return Counter(r.role for r in backbone.requests)


def specialist_dimensions(backbone) -> Counter:
    return Counter(d for r in backbone.calls("specialist") for d in routed(r))


def test_full_graph_verifies_merges_and_reports(teleport):
    clip, instruction, (t0, t1) = teleport
    backbone = scripted_world((t0, t1))
    report = run(clip, instruction, backbone)

    (event,) = report.events
    assert event.type == "object_teleportation" and event.dimension == "physical_plausibility"
    assert event.dimensions == ["physical_plausibility", "object_scene_consistency"]
    assert (event.start_s, event.end_s) == (t0, t1)
    assert event.severity == 5 and event.confidence == 0.9
    # the specialists' two hypotheses and the pixel evidence's own, verified and merged
    assert any("merged 3 hypotheses" in e for e in event.evidence)
    assert "pixel evidence" in event.evidence
    (rejected,) = report.rejected
    assert rejected.type == "object_floating" and "occludes" in rejected.reason
    assert report.flags == [] and report.problems == []
    assert report.assessment.mode == "graph"

    # two subtasks in two windows -> two segments; one router call keeps the top 3 dimensions
    # of each, and one specialist call per segment covers all three
    assert calls_by_role(backbone) == {
        "grounding": 1,
        "observer": 1,
        "router": 1,
        "specialist": 2,
        "critic": 1,
    }
    assert specialist_dimensions(backbone) == {
        "physical_plausibility": 2,
        "object_scene_consistency": 2,
        "visual_quality": 2,
    }
    manifest = report.manifest
    assert manifest.calls == {
        "critic": 1,
        "grounding": 1,
        "observer": 1,
        "router": 1,
        "specialist": 2,
    }
    assert manifest.models["critic"] == "scripted:world"
    assert manifest.images == sum(r.images for r in backbone.requests)
    assert manifest.input_tokens > 0 and manifest.cache_hits == 0
    assert {p.id for p in manifest.prompts} >= {"observer", "specialist", "critic"}


def test_pixel_hints_are_given_for_the_physical_and_visual_dimensions_only(teleport):
    clip, instruction, truth = teleport
    backbone = scripted_world(truth)
    run(clip, instruction, backbone)
    texts = [text_of(r) for r in backbone.calls("specialist")]
    assert any("object_teleportation: a region" in t for t in texts)
    for text in texts:
        hints = text.split("hints, not verdicts):\n", 1)[1]
        assert hints.startswith("(for physical_plausibility, visual_quality)\n")


def test_observer_frames_are_the_windows_sampled_frames(teleport):
    clip, instruction, truth = teleport
    backbone = scripted_world(truth)
    run(clip, instruction, backbone)
    # one observer call sees the pair of windows its segment examines, and answers for each
    (observer_call,) = backbone.calls("observer")
    assert observer_call.images == 32
    parts = observer_call.messages[1].parts
    texts = [p.text for p in parts if hasattr(p, "text")]
    # header, one time label per frame, then the role's task text last
    assert texts[1] == "t=0.00s" and texts[16] == "t=3.70s" and texts[17] == "t=4.00s"
    task = texts[-1]
    assert task.startswith(
        "Your role: the observer. The frames above show window 0 (0.00-4.00 s) and "
        "window 1 (4.00-8.00 s). For each window"
    )
    assert observer_call.json_schema["properties"]["windows"]["minItems"] == 2
    # each subtask has a window of its own here: the first window's segment sends its frames,
    # byte for byte, as a prefix of the observer's
    (segment_call,) = [r for r in backbone.calls("specialist") if "Segment: seg0" in text_of(r)]
    assert segment_call.messages[1].parts[:-1] == parts[:33]


def test_without_segment_observers_each_observer_sees_its_own_window(teleport):
    clip, instruction, truth = teleport
    backbone = scripted_world(truth)
    run(clip, instruction, backbone, segment_observers=False)
    assert [r.images for r in backbone.calls("observer")] == [16, 16]


def test_unparseable_observer_output_loses_only_its_windows(teleport):
    clip, instruction, truth = teleport
    backbone = scripted_world(truth, observer_garbage=True)
    report = run(clip, instruction, backbone, max_retries=2)
    assert report.flags[0] == "partial"
    assert report.assessment.incomplete == ["window 0", "window 1"]
    assert [e.type for e in report.events] == ["object_teleportation"]  # the rest is kept
    assert report.problems == [
        "observer (window 0 and window 1): no JSON object found in the reply"
    ]
    assert calls_by_role(backbone)["observer"] == 3  # 1 + 2 retries for the pair
    assert report.manifest.failed_requests == 3


def test_no_diagnosis_call_parsing_gives_an_empty_report_flagged_parse_failed(teleport):
    from gaze.models.scripted import ScriptedBackbone

    clip, instruction, _ = teleport
    backbone = ScriptedBackbone(lambda request: "I'm sorry, I can't see the video.")
    report = run(clip, instruction, backbone, max_retries=1)
    assert report.flags[0] == "parse_failed" and report.events == []
    assert report.manifest.failed_requests == len(backbone.requests) > 0


def test_ablation_no_router_sends_every_dimension(teleport):
    clip, instruction, truth = teleport
    backbone = scripted_world(truth)
    run(clip, instruction, backbone, use_router=False)
    assert "router" not in calls_by_role(backbone)
    assert sum(specialist_dimensions(backbone).values()) == 2 * 6


def test_ablation_no_critic_keeps_every_hypothesis(teleport):
    clip, instruction, (t0, t1) = teleport
    backbone = scripted_world((t0, t1))
    report = run(clip, instruction, backbone, use_critic=False)
    assert "critic" not in calls_by_role(backbone)
    assert sorted(e.type for e in report.events) == [
        "object_disappearance",
        "object_floating",
        "object_teleportation",
        "object_teleportation",  # the pixel evidence's own, unverified too
    ]
    assert report.rejected == []


def test_ablation_without_memories(teleport):
    clip, instruction, truth = teleport
    backbone = scripted_world(truth)
    report = run(clip, instruction, backbone, use_task_memory=False, use_scene_memory=False)
    assert "grounding" not in calls_by_role(backbone)
    assert all("(not available)" in text_of(r) for r in backbone.calls("observer"))
    # without subtasks both windows form one segment: one router call, three specialists
    assert calls_by_role(backbone)["router"] == 1
    assert report.events and report.events[0].type == "object_teleportation"


def test_top_k_and_threshold_settings(teleport):
    clip, instruction, truth = teleport
    backbone = scripted_world(truth)
    report = run(clip, instruction, backbone, top_k=1, critic_threshold=0.95)
    assert specialist_dimensions(backbone) == {"physical_plausibility": 2}
    assert report.events == []  # the critic's 0.9 is below 0.95
    assert {r.type for r in report.rejected} == {"object_teleportation", "object_floating"}


def test_second_identical_run_makes_no_backbone_calls(teleport, tmp_path, monkeypatch):
    monkeypatch.setenv("GAZE_CACHE_DIR", str(tmp_path))
    clip, instruction, truth = teleport
    first_backbone = scripted_world(truth)
    first = run(clip, instruction, first_backbone, use_cache=True)
    second_backbone = scripted_world(truth)
    second = run(clip, instruction, second_backbone, use_cache=True)
    assert len(first_backbone.requests) == 6
    assert second_backbone.requests == []
    assert second.manifest.calls == {} and second.manifest.cache_hits == 6
    assert [e.model_dump() for e in second.events] == [e.model_dump() for e in first.events]


def test_public_api_sync_and_async(teleport):
    import gaze

    clip, instruction, truth = teleport
    sync_report = gaze.diagnose(
        clip,
        instruction,
        backbones={"default": scripted_world(truth)},
        context=GazeContext(use_cache=False),
    )
    async_report = asyncio.run(
        gaze.adiagnose(
            clip,
            instruction,
            backbones={"default": scripted_world(truth)},
            context=GazeContext(use_cache=False),
        )
    )
    assert (
        [e.type for e in sync_report.events]
        == [e.type for e in async_report.events]
        == ["object_teleportation"]
    )
    pixel_only = gaze.diagnose(clip, instruction)
    assert pixel_only.assessment.mode == "pixel_evidence"


def test_progress_line_counts_windows_as_their_calls_end(teleport):
    """The line is drawn from the run's first note on, which comes before any node's update
    (once the first request has left); then each window counts as its call ends."""
    import io

    from rich.console import Console

    from gaze.api import STARTED
    from gaze.cli.progress_bar import GraphProgress

    clip, instruction, truth = teleport
    seen: list[tuple[str, dict, bool]] = []
    counted: list[str] = []
    screen = io.StringIO()
    bar = GraphProgress("clip.mp4", Console(file=screen, force_terminal=True))

    def hook(node, update):
        drawn = bar.status is not None
        bar(node, update)
        seen.append((node, update, drawn))
        if "window_observed" in update:
            counted.append(bar._text().split(" · ")[1])

    with bar:
        asyncio.run(
            adiagnose(
                clip,
                instruction,
                backbones={"default": scripted_world(truth)},
                context=GazeContext(use_cache=False),
                on_update=hook,
            )
        )
    assert seen[0] == ("progress_note", STARTED, False)  # nothing drawn before it
    assert all(drawn for _, _, drawn in seen[1:]) and "clip.mp4" in screen.getvalue()
    assert counted == ["observed 1/2 windows", "observed 2/2 windows"]
    assert bar.calls == sum(len(u.get("usage", [])) for _, u, _ in seen) > 0


def test_requests_share_their_prefix_system_then_frames_then_task(teleport):
    from gaze.models.protocol import ImagePart

    clip, instruction, truth = teleport
    backbone = scripted_world(truth)
    run(clip, instruction, backbone)
    seeing = [r for r in backbone.requests if r.images]
    assert len({r.messages[0] for r in seeing}) == 1  # one static system prompt for every role

    def frames_part(request):
        parts = request.messages[1].parts
        assert not isinstance(parts[-1], ImagePart)  # the per-call task text comes last
        return parts[:-1]

    specialists = [r for r in seeing if r.role == "specialist"]
    by_frames = Counter(frames_part(r) for r in specialists)
    assert sorted(by_frames.values()) == [1, 1]  # one call per segment, each its own frames
    observed = frames_part(backbone.calls("observer")[0])
    assert any(observed[: len(f)] == f for f in by_frames)  # a segment's frames: a prefix
    (critic,) = backbone.calls("critic")
    assert frames_part(critic) in by_frames


def test_observers_see_segments_of_four_windows_whole_when_calls_take_their_frames(tmp_path):
    """Longer segments at the same 4 frames per second: one observer call per four windows,
    and each segment's specialist call sends its group's frames, byte for byte, as a prefix."""
    from gaze.bench.forge import forge_clip
    from gaze.models.scripted import ScriptedBackbone

    clip = tmp_path / "long.mp4"
    row = forge_clip(clip, seed=3, failures=[], duration_s=24.0)
    backbone = ScriptedBackbone(fallback_minimal=True)
    run(clip, row.instruction, backbone, max_segment_windows=4, max_frames_per_call=64)
    observers = backbone.calls("observer")
    assert [r.images for r in observers] == [64, 32]  # windows 0-3, then 4-5
    specialists = sorted(backbone.calls("specialist"), key=lambda r: r.images, reverse=True)
    assert [r.images for r in specialists] == [64, 32]
    for observer, specialist in zip(observers, specialists, strict=True):
        frames = observer.messages[1].parts[: 1 + 2 * observer.images]
        assert specialist.messages[1].parts[: len(frames)] == frames


def test_building_the_graph_makes_the_later_roles_output_models():
    """The graph module, once loaded (in ``gaze.diagnose``, in a worker thread while the first
    calls are in flight), has made every dimension's specialist model and the router's and
    critic's schemas: the first specialist and critic calls do not make them between a reply
    and the requests that wait for it."""
    from tests.fresh import python_output

    probe = (
        "import gaze.graph.graph\n"
        "from gaze.agents import specialist\n"
        "from gaze.agents.critic import CriticOutput\n"
        "from gaze.agents.router import RouterOutput\n"
        "from gaze.models import structured\n"
        "made = structured._strict_schema_text.cache_info().currsize\n"
        "structured._strict_schema_text(RouterOutput)\n"
        "structured._strict_schema_text(CriticOutput)\n"
        "print(specialist.output_model.cache_info().currsize, made,\n"
        "      structured._strict_schema_text.cache_info().currsize)\n"
    )
    dimensions, before, after = map(int, python_output(probe).split())
    assert dimensions == 6
    assert before == after >= 2  # both schemas were made already
