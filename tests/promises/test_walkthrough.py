"""README "Looking at the evidence": the benchmark walk-through run as the README writes it, one
command after another in one folder (fewer clips, and the site written instead of served:
`--serve` keeps serving until stopped)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from tests.promises.conftest import gaze_cli

README = Path(__file__).resolve().parents[2] / "README.md"


def walkthrough() -> list[list[str]]:
    """The README's fenced block that starts with `gaze forge demo`, one argument list a line
    (comments dropped)."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", README.read_text(), re.S | re.M)
    (block,) = [b for b in blocks if b.startswith("gaze forge demo")]
    return [shlex.split(line.split("#")[0]) for line in block.strip().splitlines()]


def test_the_readme_bench_walkthrough_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    commands = walkthrough()
    assert [c[:3] for c in commands] == [
        ["gaze", "forge", "demo"],
        ["gaze", "bench", "run"],
        ["gaze", "bench", "score"],
        ["gaze", "view", "runs/pixel"],
        ["gaze", "view", "runs/pixel"],
    ]
    forge, run, score, view, compare = commands
    forge[forge.index("--count") + 1] = "3"
    view.remove("--serve")
    other = [a.replace("runs/pixel", "runs/other") for a in run]
    for args in (forge, run, other, score, view, compare):
        proc = gaze_cli(*args[1:])
        assert proc.returncode == 0, (args, proc.stderr)
    rows = (tmp_path / "demo" / "manifest.jsonl").read_text().splitlines()
    assert len(rows) == 3
    assert len(list((tmp_path / "runs/pixel/reports").glob("*.json"))) == 3
    scores = json.loads((tmp_path / "runs/pixel/scores.json").read_text())
    assert scores["n_clips"] == 3 and scores["n_missing_predictions"] == 0
    assert scores["recall"] == 1.0  # the demo's two injected failures, found by the default
    site = tmp_path / "runs/pixel/view"
    assert (site / "index.html").is_file() and (site / "compare.html").is_file()
    assert "compare.html" in (site / "index.html").read_text()
