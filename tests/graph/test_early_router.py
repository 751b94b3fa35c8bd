"""The router call ``gaze.diagnose`` starts before the graph reaches its ``route`` node (a long
clip's observers can answer before the graph module has loaded): asked once, asked exactly
what the node would ask, and ignored -- though still counted -- when it asked otherwise."""

from __future__ import annotations

import pytest

import gaze.graph.early
from gaze.models.scripted import minimal_instance
from tests.graph.script import text_of
from tests.graph.test_early import _diagnose, graph_loads_after


def _router_requests(backbone):
    return [r for r in backbone.requests if r.schema_name == "RouterOutput"]


def _specialists(backbone):
    """What each specialist call was asked: the dimensions the routes gave it, and its text."""
    asked = [r for r in backbone.requests if r.schema_name.startswith("Specialists_")]
    return sorted((r.schema_name, text_of(r)) for r in asked)


@pytest.fixture
def clean(forge_dir, forge_rows):
    row = forge_rows["clean"]
    return forge_dir / row.video, row.instruction


def _answer(request):
    return minimal_instance(request.json_schema)


def test_the_router_is_asked_before_the_graph_loads_and_once(clean, monkeypatch):
    respond = graph_loads_after("RouterOutput", monkeypatch)
    backbone, report = _diagnose(*clean, respond)
    assert len(_router_requests(backbone)) == report.manifest.calls["router"] == 1
    assert report.manifest.prompts and "router" in [p.id for p in report.manifest.prompts]
    assert not report.assessment.not_assessed


def test_the_early_router_call_asks_what_the_route_node_would(clean, monkeypatch):
    early_backbone, early_report = _diagnose(*clean, _answer)
    (early_request,) = _router_requests(early_backbone)

    # the early call asks about one segment less: the node sees that and asks itself
    texts = gaze.graph.early.router_texts
    monkeypatch.setattr(gaze.graph.early, "router_texts", lambda *a: texts(*a)[:-1])
    backbone, report = _diagnose(*clean, _answer)
    mismatched, by_node = _router_requests(backbone)
    assert text_of(mismatched) != text_of(by_node)
    assert text_of(by_node) == text_of(early_request)  # what the early call asked, unpatched
    # both calls were paid for and are counted; the routes come from the node's own call
    assert report.manifest.calls["router"] == 2
    assert early_report.manifest.calls["router"] == 1
    assert _specialists(backbone) == _specialists(early_backbone)
    assert report.events == early_report.events


def test_no_early_router_call_without_the_router(clean):
    backbone, report = _diagnose(*clean, _answer, use_router=False)
    assert _router_requests(backbone) == [] and "router" not in report.manifest.calls
