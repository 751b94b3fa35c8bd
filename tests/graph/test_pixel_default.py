"""The graph with no model configured runs the pixel-evidence default (what `gaze diagnose`
writes without a model); a model in the context, GAZE_MODEL or services opened by a caller
take the diagnosis graph."""

from __future__ import annotations

import asyncio

import pytest

from gaze.errors import GazeInputError
from gaze.graph import GazeContext, build_graph
from gaze.graph.pixel_default import MODEL_ENTRY, PIXEL_ENTRY
from gaze.pixels.diagnosis import diagnose_pixels
from gaze.schema.inputs import clip_input
from gaze.settings.context import has_model
from tests.conftest import REPO

DEMO = str(REPO / "gaze" / "assets" / "demo.mp4")
INSTRUCTION = "put the orange block on the plate"


def _run(context: GazeContext) -> dict:
    graph = build_graph()
    inputs = {"video": DEMO, "instruction": INSTRUCTION, "clip_id": "demo"}
    return asyncio.run(graph.ainvoke(inputs, context=context))


def test_has_model_reads_the_context_the_environment_and_an_opened_run(monkeypatch):
    monkeypatch.delenv("GAZE_MODEL", raising=False)
    assert not has_model(GazeContext(), given=False)
    assert has_model(GazeContext(), given=True)
    assert has_model(GazeContext(model="scripted:auto"), given=False)
    monkeypatch.setenv("GAZE_MODEL", "scripted:auto")
    assert has_model(GazeContext(), given=False)


def test_a_run_without_a_model_reports_the_pixel_evidence(monkeypatch):
    monkeypatch.delenv("GAZE_MODEL", raising=False)
    report = _run(GazeContext())["report"]
    expected = diagnose_pixels(clip_input(DEMO, INSTRUCTION, clip_id="demo"))
    assert report["clip_id"] == "demo"
    assert report["assessment"]["mode"] == "pixel_evidence"
    assert report["flags"] == expected.flags
    assert [(e["type"], e["start_s"], e["end_s"]) for e in report["events"]] == [
        (e.type, e.start_s, e.end_s) for e in expected.events
    ]
    assert report["manifest"]["calls"] == {}


def test_a_run_with_a_model_takes_the_diagnosis_graph(monkeypatch):
    monkeypatch.delenv("GAZE_MODEL", raising=False)
    report = _run(GazeContext(model="scripted:auto", use_cache=False))["report"]
    assert report["assessment"]["mode"] != "pixel_evidence"
    assert report["manifest"]["calls"]["observer"] >= 1


@pytest.mark.parametrize(
    ("context", "says"),
    [
        (GazeContext(sections=["diagnosis", "progress"]), "sections ['progress'] need a model"),
        (
            GazeContext(roles={"critic": "scripted:auto"}),
            r"need a default model \(--model, the context's model, or GAZE_MODEL\) too",
        ),
    ],
)
def test_what_the_pixel_default_cannot_stand_in_for_is_refused(monkeypatch, context, says):
    monkeypatch.delenv("GAZE_MODEL", raising=False)
    with pytest.raises(GazeInputError, match=says.replace("[", r"\[").replace("]", r"\]")):
        _run(context)


def test_the_entry_names_nodes_the_graph_has():
    nodes = set(build_graph().get_graph().nodes)
    assert {*MODEL_ENTRY, PIXEL_ENTRY} <= nodes
