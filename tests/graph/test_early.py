"""Work that begins before the graph module loads: ``gaze.diagnose`` starts both grounding calls
and the clip's decoding at once, and the nodes take those results instead of asking again."""

from __future__ import annotations

import asyncio
import threading
from collections import Counter

from gaze.api import adiagnose
from gaze.graph.context import GazeContext
from gaze.models.scripted import ScriptedBackbone, minimal_instance


def test_grounding_is_asked_once_and_before_the_graph_runs(forge_dir, forge_rows, monkeypatch):
    import gaze.api

    graph_loaded = threading.Event()
    asked_before_graph: list[str] = []
    load_graph = gaze.api._load_graph

    def slow_graph_load():
        threading.Event().wait(0.3)  # the graph module is the slow import of a cold process
        graph = load_graph()
        graph_loaded.set()
        return graph

    def respond(request):
        if not graph_loaded.is_set():
            asked_before_graph.append(request.schema_name)
        return minimal_instance(request.json_schema)

    monkeypatch.setattr(gaze.api, "_load_graph", slow_graph_load)
    backbone = ScriptedBackbone(respond, model="early")
    row = forge_rows["clean"]
    report = asyncio.run(
        adiagnose(
            forge_dir / row.video,
            row.instruction,
            backbones={"default": backbone},
            context=GazeContext(use_cache=False),
        )
    )
    asked = Counter(r.schema_name for r in backbone.requests)
    assert asked["TaskMemory"] == 1 and asked["SceneMemory"] == 1  # not asked again by nodes
    assert sorted(asked_before_graph) == ["SceneMemory", "TaskMemory"]
    assert report.manifest.calls["grounding"] == 2  # counted once, in the report
    assert "task memory" not in report.assessment.not_assessed


def test_an_ablated_memory_is_not_asked_early(forge_dir, forge_rows):
    backbone = ScriptedBackbone(lambda r: minimal_instance(r.json_schema), model="early")
    row = forge_rows["clean"]
    asyncio.run(
        adiagnose(
            forge_dir / row.video,
            row.instruction,
            backbones={"default": backbone},
            context=GazeContext(use_cache=False, use_scene_memory=False),
        )
    )
    asked = Counter(r.schema_name for r in backbone.requests)
    assert asked["TaskMemory"] == 1 and asked["SceneMemory"] == 0
