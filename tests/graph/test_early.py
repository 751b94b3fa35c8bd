"""Work that begins before the graph module loads: ``gaze.diagnose`` starts both grounding calls,
the clip's decoding and the observers at once, and the nodes take those results instead of
asking again. Each window's observer starts when its frames are encoded."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections import Counter

import pytest

from gaze.api import adiagnose
from gaze.models.scripted import ScriptedBackbone, minimal_instance
from gaze.settings.context import GazeContext
from gaze.settings.segment_length import segment_windows


def _diagnose(video, instruction, respond, **context):
    """(the scripted backbone, the report) of one adiagnose run with no cache."""
    backbone = ScriptedBackbone(respond, model="early")
    report = asyncio.run(
        adiagnose(
            video,
            instruction,
            backbones={"default": backbone},
            context=GazeContext(use_cache=False, **context),
        )
    )
    return backbone, report


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
    row = forge_rows["clean"]
    backbone, report = _diagnose(forge_dir / row.video, row.instruction, respond)
    asked = Counter(r.schema_name for r in backbone.requests)
    # one call gives both memories, and the nodes do not ask again
    assert asked["Grounding"] == 1 and asked["TaskMemory"] == asked["SceneMemory"] == 0
    assert "Grounding" in asked_before_graph  # observers may follow
    assert report.manifest.calls["grounding"] == 1  # counted once, in the report
    assert [p.id for p in report.manifest.prompts].count("ground") == 1
    assert not {"task memory", "scene memory"} & set(report.assessment.not_assessed)


def test_an_ablated_memory_is_not_asked_early(forge_dir, forge_rows):
    row = forge_rows["clean"]
    backbone, _ = _diagnose(
        forge_dir / row.video,
        row.instruction,
        lambda r: minimal_instance(r.json_schema),
        use_scene_memory=False,
    )
    asked = Counter(r.schema_name for r in backbone.requests)
    assert asked["TaskMemory"] == 1 and asked["SceneMemory"] == asked["Grounding"] == 0
    _, report = _diagnose(
        forge_dir / row.video,
        row.instruction,
        lambda r: minimal_instance(r.json_schema),
        use_task_memory=False,
    )
    assert report.manifest.calls["grounding"] == 1
    assert [p.id for p in report.manifest.prompts if p.id.startswith("ground")] == ["ground_scene"]


def graph_loads_after(schema_name, monkeypatch):
    """A responder under which the graph module loads only once a request of ``schema_name``
    was asked (the run fails unless that request is made without the graph)."""
    import gaze.api

    asked = threading.Event()
    load_graph = gaze.api._load_graph

    def graph_after_the_request():
        assert asked.wait(30), f"no {schema_name} request was asked before the graph loaded"
        return load_graph()

    def respond(request):
        if request.schema_name == schema_name:
            asked.set()
        return minimal_instance(request.json_schema)

    monkeypatch.setattr(gaze.api, "_load_graph", graph_after_the_request)
    return respond


def test_observers_start_before_the_graph_loads(forge_dir, forge_rows, monkeypatch):
    respond = graph_loads_after("WindowObservations", monkeypatch)
    row = forge_rows["clean"]
    backbone, report = _diagnose(forge_dir / row.video, row.instruction, respond)
    asked = Counter(r.schema_name for r in backbone.requests)
    segment_s = 4 * GazeContext().max_segment_windows  # 4 s windows, a segment's in one call
    groups = -(-report.clip.duration_s // segment_s)
    assert asked["WindowObservations"] == report.manifest.calls["observer"] == groups  # once each
    assert not report.assessment.not_assessed


def test_a_window_is_observed_while_later_windows_are_still_decoding(tmp_path, monkeypatch):
    import gaze.video.store as store
    from gaze.bench.forge import forge_clip

    video = tmp_path / "long.mp4"
    forge_clip(video, seed=3, failures=[], duration_s=90.0)
    events: list[str] = []
    decoding = store._Decoding

    class Recorded(decoding):
        def set_clip(self, clip):
            events.append("clip decoded")
            super().set_clip(clip)

    def respond(request):
        if request.schema_name == "WindowObservations":
            events.append("observer asked")
        return minimal_instance(request.json_schema)

    monkeypatch.setattr(store, "_Decoding", Recorded)
    _diagnose(video, "put the block on the plate", respond)
    per_call = segment_windows(GazeContext(), 23)  # 23 windows: a segment's per call (six)
    groups = -(-23 // per_call)
    assert events.count("observer asked") == groups and events.count("clip decoded") == 1
    assert events.index("observer asked") < events.index("clip decoded")


def test_the_reports_wall_time_counts_the_work_done_before_the_graph(
    forge_dir, forge_rows, monkeypatch
):
    """Decoding, grounding and the observers start before the graph runs; the report's wall
    time starts with them. It started at the graph's first node before, and a scripted run
    whose work was all done while the graph module loaded reported 0.02 s."""
    import gaze.api

    load_graph = gaze.api._load_graph

    def slow_graph_load():
        threading.Event().wait(0.3)  # the graph module is the slow import of a cold process
        return load_graph()

    monkeypatch.setattr(gaze.api, "_load_graph", slow_graph_load)
    row = forge_rows["clean"]
    _, report = _diagnose(
        forge_dir / row.video, row.instruction, lambda r: minimal_instance(r.json_schema)
    )
    assert report.manifest.wall_time_s >= 0.3


def test_the_graph_module_loads_once_the_first_requests_are_handed_over(
    forge_dir, forge_rows, monkeypatch
):
    import gaze.api

    asked_when_loading: list[list[str]] = []
    backbone = ScriptedBackbone(lambda r: minimal_instance(r.json_schema), model="early")
    load_graph = gaze.api._load_graph

    def recording_load():
        asked_when_loading.append([r.schema_name for r in backbone.requests])
        return load_graph()

    monkeypatch.setattr(gaze.api, "_load_graph", recording_load)
    monkeypatch.setattr(gaze.api, "_graph_loaded", lambda: False)  # as in a new process
    row = forge_rows["clean"]
    asyncio.run(
        adiagnose(
            forge_dir / row.video,
            row.instruction,
            backbones={"default": backbone},
            context=GazeContext(use_cache=False),
        )
    )
    # LangGraph's import competes for the interpreter with the SDK's work on the first requests
    assert len(asked_when_loading) == 1
    assert "Grounding" in asked_when_loading[0]


@pytest.mark.skipif(sys.platform != "linux", reason="only Linux keeps a priority per thread")
def test_the_graph_module_loads_at_a_lower_priority_in_a_thread_of_its_own(
    forge_dir, forge_rows, monkeypatch
):
    """Its first node runs a call later; decoding's windows are wanted by the observers now.
    The thread ends with the import, so no later work inherits its priority."""
    import gaze.api
    from gaze.cpu_priority import this_thread_niceness

    loading: list[tuple[str, int]] = []
    load_graph = gaze.api._load_graph

    def recording_load():
        loading.append((threading.current_thread().name, this_thread_niceness()))
        return load_graph()

    monkeypatch.setattr(gaze.api, "_load_graph", recording_load)
    row = forge_rows["clean"]
    backbone, report = _diagnose(forge_dir / row.video, row.instruction, _minimal)
    own = this_thread_niceness()
    assert loading == [("gaze-graph-load", min(19, own + gaze.api.GRAPH_LOAD_NICENESS))]
    assert report.events is not None and backbone.requests
    for thread in threading.enumerate():
        if thread.name == "gaze-graph-load":
            thread.join(5)
            assert not thread.is_alive()


def _minimal(request):
    return minimal_instance(request.json_schema)


def test_the_graph_loads_without_waiting_when_nothing_started_early_or_it_is_loaded(monkeypatch):
    import types

    import gaze.api

    async def never() -> None:
        await asyncio.Event().wait()

    async def check() -> None:
        idle = types.SimpleNamespace(early={}, caller=None)
        await asyncio.wait_for(gaze.api._first_requests_out(idle), timeout=5)
        monkeypatch.setattr(gaze.api, "_graph_loaded", lambda: True)  # a later clip
        busy = types.SimpleNamespace(early={"task": asyncio.ensure_future(never())}, caller=None)
        await asyncio.wait_for(gaze.api._first_requests_out(busy), timeout=5)
        busy.early["task"].cancel()

    asyncio.run(check())
