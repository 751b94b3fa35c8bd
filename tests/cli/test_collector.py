"""The garbage collector of a ``gaze`` process: tuned for the command, off while a model run
loads its modules, frozen and back on once the graph runs; a caller's process keeps its own."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from gaze.cli import collector
from gaze.cli.main import run
from tests.fresh import python_output

REPORT = (
    "import gc, sys, gaze.cli.main as cli, gaze.api\n"
    "untouched = gc.get_threshold()[0]\n"
    "sys.argv = ['gaze', *sys.argv[1:]]\n"
    "cli.run = lambda argv=None: print(untouched, gc.get_threshold()[0], gc.isenabled(), "
    "flush=True) or 0\n"
    "cli.main()\n"
)
"""Prints the threshold before ``main`` (a library's), then the command's threshold and
whether its collector is on as the command starts."""


def test_a_command_collects_less_often_than_a_callers_process_and_stays_on() -> None:
    library, command, enabled = python_output(REPORT, "schema").split()
    assert int(library) == gc.get_threshold()[0] != collector.COMMAND_GC_THRESHOLD
    assert int(command) == collector.COMMAND_GC_THRESHOLD
    assert enabled == "True"


@pytest.mark.parametrize(
    ("args", "enabled"),
    [
        (["diagnose", "clip.mp4", "-i", "pick", "--model", "openai:m"], "False"),
        (["diagnose", "clip.mp4", "-i", "pick", "--model=scripted:auto"], "False"),
        (["diagnose", "clip.mp4", "-i", "pick"], "True"),  # the pixel default loads no graph
        (["diagnose", "--help", "--model", "openai:m"], "True"),
    ],
)
def test_a_model_run_starts_with_the_collector_off(args: list[str], enabled: str) -> None:
    assert python_output(REPORT, *args).split()[2] == enabled


@pytest.fixture
def collector_off() -> Iterator[None]:
    """This process's collector as ``gaze diagnose --model`` starts it, restored afterwards."""
    threshold = gc.get_threshold()
    collector.tune(loads_while_running=True)
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_the_collector_comes_back_frozen_once_the_graph_runs(
    collector_off: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not gc.isenabled()
    assert run(["diagnose", "--demo", "--model", "scripted:auto", "--no-cache", "--json"]) == 0
    assert '"events"' in capsys.readouterr().out
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0  # what the imports made, where collections never look


def test_imports_done_acts_once(collector_off: None) -> None:
    collector.imports_done()
    frozen = gc.get_freeze_count()
    assert gc.isenabled() and frozen > 0
    kept = [[] for _ in range(1000)]  # new objects (tracked ones) stay collectable
    assert gc.is_tracked(kept[0])
    collector.imports_done()
    # a frozen object whose last reference goes is freed and leaves the count, so it may fall;
    # a second freeze would add the thousand new lists
    assert gc.get_freeze_count() <= frozen
    assert kept
