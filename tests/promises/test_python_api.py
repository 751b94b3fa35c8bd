"""README "From Python": ``gaze.diagnose`` as the README shows it, in a plain script and in a
notebook's running event loop, and the same one-line refusals as the CLI and Studio."""

from __future__ import annotations

import subprocess
import sys

import pytest

import gaze
from gaze.errors import GazeInputError
from gaze.settings.context import GazeContext
from tests.devserver import REPO

DEMO = REPO / "gaze" / "assets" / "demo.mp4"


def run_python(code: str, tmp_path) -> subprocess.CompletedProcess[str]:
    """Python code in a fresh interpreter, every warning an error (a coroutine never awaited
    is one)."""
    env = {"GAZE_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        cwd=REPO,
    )


def test_diagnose_works_inside_a_running_event_loop_as_in_a_notebook(tmp_path):
    """Jupyter runs cells inside an event loop: ``gaze.diagnose`` used to fail there with
    "asyncio.run() cannot be called from a running event loop" and a never-awaited coroutine."""
    code = f"""
import asyncio, gaze

clip, task = {str(DEMO)!r}, "put the orange block on the plate"

async def cell():
    sync = gaze.diagnose(clip, task, model="scripted:auto")
    awaited = await gaze.adiagnose(clip, task, model="scripted:auto")
    return sync, awaited

sync, awaited = asyncio.run(cell())
assert [e.type for e in sync.events] == [e.type for e in awaited.events]
print(len(sync.events), sync.manifest.models["critic"])
"""
    proc = run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["2", "scripted:auto"]


def test_the_readme_example_runs_as_written_with_the_scripted_backbone(tmp_path):
    code = f"""
import gaze
from gaze.models.scripted import ScriptedBackbone

backbone = ScriptedBackbone(fallback_minimal=True)
report = gaze.diagnose({str(DEMO)!r}, "open the drawer", backbones={{"default": backbone}})
for event in report.events:
    print(event.type, event.start_s, event.end_s, event.severity, bool(event.evidence))
"""
    proc = run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()] == [
        "camera_instability",
        "object_teleportation",
    ]


@pytest.mark.parametrize(
    ("context", "said"),
    [
        (GazeContext(sections=["diagnosis", "pa_ia"]), "sections ['pa_ia'] need a model"),
        (GazeContext(roles={"critic": "scripted:auto"}), "roles ['critic'] need a default model"),
    ],
)
def test_diagnose_without_a_model_refuses_what_pixels_cannot_do(context, said):
    """The CLI and Studio refuse these in one line; ``gaze.diagnose`` returned the pixel report
    without a word."""
    with pytest.raises(GazeInputError, match=said.replace("[", r"\[").replace("]", r"\]")):
        gaze.diagnose(DEMO, "put the orange block on the plate", context=context)


def test_the_cli_says_the_same(tmp_path):
    from tests.promises.conftest import gaze_cli

    proc = gaze_cli("diagnose", "--demo", "--role", "critic=scripted:auto")
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("gaze: error: roles ['critic'] need a default model")
