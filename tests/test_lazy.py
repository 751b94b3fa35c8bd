"""Package namespaces import their members on first use: a submodule import pays only for what
it needs (``gaze diagnose`` sends its first request sooner)."""

from __future__ import annotations

import pytest

from tests.fresh import python_output


def _loaded_after(statement: str) -> set[str]:
    probe = f"import sys\n{statement}\nprint(' '.join(sys.modules))"
    return set(python_output(probe, timeout=60).split())


def test_a_submodule_import_loads_none_of_its_siblings():
    loaded = _loaded_after("import gaze.schema.inputs, gaze.agents.grounding, gaze.models.protocol")
    assert {"gaze.schema.inputs", "gaze.agents.grounding", "gaze.models.protocol"} <= loaded
    assert not {"gaze.schema.report", "gaze.agents.critic", "gaze.models.scripted"} & loaded


def test_the_diagnose_command_loads_the_report_writers_only_when_it_writes():
    loaded = _loaded_after("import gaze.cli.diagnose_cmd")
    assert not {"gaze.report.terminal", "gaze.report.files"} & loaded


def test_the_parent_process_reads_the_first_frame_without_pyav():
    """The decoding child decodes with PyAV; the parent's first request needs only the first
    frame, and should not wait for PyAV's import."""
    loaded = _loaded_after("import gaze.video.store, gaze.cli.diagnose_cmd")
    assert "gaze.video.store" in loaded
    assert not {"av", "gaze.video.reader"} & loaded


def test_the_first_request_of_a_command_waits_for_neither_numpy_nor_opencv():
    """Everything ``gaze diagnose`` loads before its first request leaves NumPy and OpenCV out
    (0.1 s of the one interpreter lock): the first frame comes from the decoding child, the
    start-up check's image is bytes, the pixel pass is named, not loaded."""
    loaded = _loaded_after(
        "import gaze.cli.diagnose_cmd, gaze.api, gaze.graph.early, gaze.graph.services, "
        "gaze.models.providers.openai_chat, gaze.models.registry, gaze.settings.caller, "
        "gaze.settings.served_layout\n"
        "from gaze.pixels.measure import PIXEL_PASS"
    )
    assert {"gaze.graph.early", "gaze.video.store", "gaze.pixels.measure"} <= loaded
    assert not {"numpy", "cv2", "gaze.video.clip", "gaze.pixels.signals"} & loaded
    # the agents and records name dimensions; the codebook's models load after the request
    assert "gaze.schema.dimensions" in loaded and "gaze.schema.codebook" not in loaded
    # the input's rules, not its model (the first that reads field docstrings costs 0.02 s)
    assert "gaze.schema.input_rules" in loaded and "gaze.schema.inputs" not in loaded


def test_the_decoding_child_starts_without_pydantic():
    """A decoding child's imports (``gaze.video.decode_process.load_decoding``, then the pixel
    pass's meter) leave pydantic out, and with it the codebook and the report's models: the
    clip's metadata goes to the parent as plain values (``DecodedClip.info_fields``). A long
    clip's decoding, which its last observer request waits for, started 0.1 s sooner each
    time one of them went."""
    loaded = _loaded_after(
        "import gaze.video.decode_process as child; child.load_decoding(); "
        "import gaze.pixels.signals"
    )
    assert "gaze.video.clip" in loaded
    assert not {"pydantic", "gaze.schema.clip_info", "gaze.schema.report"} & loaded
    assert not {"gaze.schema.events", "gaze.schema.codebook"} & loaded
    assert "asyncio" not in loaded  # the child has no event loop (20-30 ms of its start)


def test_the_decoding_child_finds_pixel_events_without_pydantic():
    """After decoding, the child's pixel pass sends its findings as plain values, and the parent
    makes the report's events: a long clip's router call waits for that pass, and making the
    events there loaded pydantic and the codebook (0.1 s of the child's CPU)."""
    probe = (
        "import io, sys\n"
        "from importlib import resources\n"
        "from gaze.video import decode_process as child\n"
        "from gaze.video.windows import SamplingSettings\n"
        "from gaze.pixels.measure import PIXEL_PASS\n"
        "demo = str(resources.files('gaze') / 'assets' / 'demo.mp4')\n"
        "out = io.BytesIO()\n"
        "child._serve(child.DecodeRequest(demo, SamplingSettings(), PIXEL_PASS), out)\n"
        "loaded = ' '.join(sys.modules)\n"
        "replies = io.BytesIO(out.getvalue())\n"
        "while (message := child._receive(replies)) is not None:\n"
        "    if message[0] == 'pixels':\n"
        "        print(' '.join(f.type for f in message[2]))\n"
        "print(loaded)"
    )
    found, loaded = python_output(probe, timeout=120).splitlines()
    assert "gaze.pixels.evidence" in loaded.split()
    assert not {"pydantic", "gaze.schema.events", "gaze.schema.codebook"} & set(loaded.split())
    # the demo's two events (README), as plain findings that the parent turns into events
    assert sorted(found.split()) == ["camera_instability", "object_teleportation"]


def test_the_graph_loads_after_what_the_work_started_early_still_needs():
    """The router call is made outside the graph once the observers answer; its module, loaded
    as part of the graph's import, held it up while that import (at the lowest priority) held
    a module the two share."""
    probe = "import sys, gaze.api\ngaze.api._load_graph()\nprint(' '.join(sys.modules))"
    order = python_output(probe, timeout=120).split()
    early = order.index("gaze.video.clip"), order.index("gaze.agents.router")
    assert max(early) < order.index("langgraph.graph") < order.index("gaze.graph.graph")


def test_package_members_are_still_importable_from_the_package():
    from gaze import agents, models, schema

    assert schema.Report.__name__ == "Report"
    assert agents.route.__module__ == "gaze.agents.router"
    assert models.ScriptedBackbone.__module__ == "gaze.models.scripted"
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        _ = schema.Nothing
    with pytest.raises(ImportError):
        from gaze.models import nothing_here  # noqa: F401


@pytest.mark.parametrize("package", ["gaze", "gaze.schema", "gaze.agents", "gaze.models"])
def test_every_name_a_lazy_package_exports_resolves(package):
    """Each lazy package names its members three times (the type checkers' imports, the
    name-to-submodule table, ``__all__``); a name missing from the table fails only at run time."""
    import importlib

    module = importlib.import_module(package)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"


DEFERRED_PACKAGE = {
    "__init__.py": "from .heavy import HEAVY\nRUNS = RUNS + 1 if 'RUNS' in globals() else 1\n",
    "heavy.py": "HEAVY = 'heavy'\n",
    "light.py": "LIGHT = 'light'\n",
}


def _deferred_package(root, name: str, files: dict[str, str]) -> None:
    (root / name).mkdir()
    for file, text in files.items():
        (root / name / file).write_text(text)


def test_a_deferred_package_imports_its_submodules_without_its_init(tmp_path, monkeypatch):
    import sys

    from gaze.lazy import defer_package_init

    _deferred_package(tmp_path, "deferred_pkg", DEFERRED_PACKAGE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("deferred_pkg", "deferred_pkg.heavy", "deferred_pkg.light"):
        monkeypatch.delitem(sys.modules, name, raising=False)

    assert defer_package_init("deferred_pkg")
    from deferred_pkg.light import LIGHT

    assert LIGHT == "light" and "deferred_pkg.heavy" not in sys.modules
    from deferred_pkg import HEAVY  # a name its __init__ defines: the __init__ runs, once

    assert HEAVY == "heavy" and "deferred_pkg.heavy" in sys.modules
    package = sys.modules["deferred_pkg"]
    assert package.RUNS == 1 and "light" in dir(package) and package.RUNS == 1
    assert not defer_package_init("deferred_pkg")  # imported already
    assert not defer_package_init("deferred_pkg.light")  # a module, not a package


def test_a_deferred_init_that_fails_raises_and_runs_again_at_the_next_read(tmp_path, monkeypatch):
    import sys

    from gaze.lazy import defer_package_init

    broken = {"__init__.py": "import os\nif os.environ.get('BREAK_IT'):\n    raise OSError('no')\n"}
    broken["__init__.py"] += "NAME = 'name'\n"
    _deferred_package(tmp_path, "flaky_pkg", broken)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "flaky_pkg", raising=False)
    monkeypatch.setenv("BREAK_IT", "1")

    assert defer_package_init("flaky_pkg")
    with pytest.raises(OSError, match="no"):
        _ = sys.modules["flaky_pkg"].NAME
    monkeypatch.delenv("BREAK_IT")
    assert sys.modules["flaky_pkg"].NAME == "name"


NESTED_PACKAGE = {
    "__init__.py": "from . import inner\nfrom .inner.light import LIGHT\n",
    "inner/__init__.py": "from .heavy import HEAVY\nfrom . import deep\n",
    "inner/heavy.py": "HEAVY = 'heavy'\n",
    "inner/light.py": "LIGHT = 'light'\nfrom .deep.leaf import LEAF\n",
    "inner/deep/__init__.py": "from .weighty import WEIGHTY\n",
    "inner/deep/weighty.py": "WEIGHTY = 'weighty'\n",
    "inner/deep/leaf.py": "LEAF = 'leaf'\n",
}


def test_subpackages_deferred_before_their_parent_is_imported(tmp_path, monkeypatch):
    """``outer``'s ``__init__`` imports ``outer.inner`` (as ``openai``'s imports
    ``openai.types``): deferred before ``outer`` is imported, neither ``inner``'s ``__init__`` nor
    ``inner.deep``'s runs until a name only they define is read."""
    import sys

    from gaze.lazy import defer_package_init

    (tmp_path / "outer" / "inner" / "deep").mkdir(parents=True)
    for file, text in NESTED_PACKAGE.items():
        (tmp_path / "outer" / file).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "outer" or m.startswith("outer.")]:
        monkeypatch.delitem(sys.modules, name)

    assert defer_package_init("outer.inner", before_parent=True)
    assert defer_package_init("outer.inner.deep", before_parent=True)
    assert "outer" not in sys.modules  # found without running the parent's __init__
    import outer

    assert outer.LIGHT == "light" and outer.inner.deep is sys.modules["outer.inner.deep"]
    assert "outer.inner.heavy" not in sys.modules and "outer.inner.deep.weighty" not in sys.modules
    assert outer.inner.HEAVY == "heavy" and outer.inner.deep.WEIGHTY == "weighty"  # run now
    for name in [m for m in sys.modules if m == "outer" or m.startswith("outer.")]:
        monkeypatch.delitem(sys.modules, name)
    assert defer_package_init("outer.inner")  # by default the parent is imported first...
    assert "outer" in sys.modules and "outer.inner.heavy" in sys.modules  # ...and imports it
    assert not defer_package_init("outer.nowhere", before_parent=True)


def test_an_openai_run_loads_neither_the_api_s_models_nor_the_responses_api_s():
    """``import openai`` runs ``openai.types``' ``__init__`` (every model of the API) and reaches
    ``openai.types.responses``' (the Responses API's): a whole diagnosis through the real SDK
    and a stand-in server runs without either, and their names still import afterwards."""
    from gaze.models.providers.openai_import import DEFERRED_TYPES

    assert DEFERRED_TYPES == ("openai.types", "openai.types.responses")
    probe = (
        "import sys, gaze\n"
        "from gaze.cli.diagnose_cmd import demo_clip\n"
        "from gaze.settings.context import GazeContext\n"
        "from tests.standin import StandIn, minimal_chat\n"
        "clip, instruction = demo_clip()\n"
        "with StandIn(responder=minimal_chat) as server:\n"
        "    url = server.url + '/v1'\n"
        "    context = GazeContext(model='openai:m', base_url=url, use_cache=False)\n"
        "    report = gaze.diagnose(clip, instruction, context=context)\n"
        "    posts = sum(seen.method == 'POST' for seen in server.seen)\n"
        "whole = ('openai.types.eval_create_params', 'openai.types.responses.response')\n"
        "print(report.clip.frame_count > 0, posts > 5, *[name in sys.modules for name in whole])\n"
        "import openai\n"
        "from openai.types import ChatModel, Batch\n"
        "print(openai.types.responses.Response.__name__, Batch.__module__)"
    )
    first, then = python_output(probe, timeout=180).splitlines()
    assert first.split() == ["True", "True", "False", "False"]
    assert then == "Response openai.types.batch"


def test_a_model_run_loads_neither_langsmith_s_models_nor_the_langgraph_sdk_s_client():
    """LangGraph's import reaches one enum in ``langsmith.types``, whose ``__init__`` imports
    about 160 generated pydantic models, and one protocol in ``langgraph_sdk.auth``, whose top
    package's ``__init__`` imports the SDK's HTTP client: a whole diagnosis runs without either
    ``__init__``, and both packages' names are still there for whoever asks."""
    from gaze.graph.early import DEFERRED_PACKAGES

    assert DEFERRED_PACKAGES == ("langsmith.types", "langgraph_sdk")
    probe = (
        "import sys, gaze\n"
        "from gaze.cli.diagnose_cmd import demo_clip\n"
        "from gaze.settings.context import GazeContext\n"
        "clip, instruction = demo_clip()\n"
        "context = GazeContext(model='scripted:auto', use_cache=False)\n"
        "report = gaze.diagnose(clip, instruction, context=context)\n"
        "generated = sum(m.startswith('langsmith.types.') for m in sys.modules)\n"
        "print(len(report.events), generated, 'langgraph_sdk.client' in sys.modules)\n"
        "from langsmith.types import Run\n"
        "from langgraph_sdk import get_client\n"
        "print(Run.__module__, get_client.__name__)"
    )
    first, then = python_output(probe, timeout=180).splitlines()
    assert first.split() == ["2", "1", "False"]
    assert then == "langsmith.types.run get_client"
