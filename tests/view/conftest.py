"""A forge v2 run of 24 clips by two methods, both scored, made once per test run (for every
worker: ``tests.made_once``) through the command line exactly as the README shows it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from gaze.cli.main import run
from tests.made_once import made_once


@dataclass(frozen=True)
class Runs:
    forge: Path
    pixel: Path
    graph: Path


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Shared by every worker: a test that changes a run or the forge works on a copy."""
    root = made_once(tmp_path_factory, "viewer", _make_runs)
    return Runs(root / "forge", root / "pixel", root / "graph")


def _make_runs(root: Path) -> None:
    forge, pixel, graph = root / "forge", root / "pixel", root / "graph"
    manifest = str(forge / "manifest.jsonl")
    # the second method must differ from the first: a graph run whose critic rejects every
    # hypothesis (scripted:auto's critic gives no verdicts, so its events are the pixels')
    critic = root / "critic-rejects.json"
    verdicts = [
        {"index": i, "decision": "reject", "reason": "normal", "confidence": 0.9} for i in range(12)
    ]
    critic.write_text(json.dumps({"critic": [{"verdicts": verdicts}] * 400}))
    steps = [
        ["forge", str(forge), "--v2", "--count", "24", "--seed", "5", "--max-side", "256"],
        ["bench", "run", manifest, "--method", "pixel", "--out", str(pixel)],
        [
            "bench",
            "run",
            manifest,
            "--method",
            "robogaze",
            "--model",
            f"scripted:{critic}",
            "--out",
            str(graph),
        ],
        [
            "bench",
            "score",
            manifest,
            str(pixel / "reports"),
            "--judge",
            "type",
            "--bootstrap",
            "100",
            "--out",
            str(pixel / "scores.json"),
        ],
        [
            "bench",
            "score",
            manifest,
            str(graph / "reports"),
            "--judge",
            "type",
            "--bootstrap",
            "100",
            "--out",
            str(graph / "scores.json"),
        ],
    ]
    for argv in steps:
        assert run(argv) == 0, argv
