"""Shared fixtures: forge clips made once per session, and the shared real clips when present."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gaze.bench.forge import KINDS, forge_set
from gaze.schema.manifest import ManifestClip

REPO = Path(__file__).resolve().parents[1]
SHARED_CLIPS = Path(os.environ.get("GAZE_SHARED_CLIPS", REPO.parent / "shared" / "clips"))
FORGE_SEED = 3


@pytest.fixture(scope="session")
def forge_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One forge clip of every kind (clean + each injected failure), made once."""
    out = tmp_path_factory.mktemp("forge")
    forge_set(out, count=len(KINDS), seed=FORGE_SEED)
    return out


@pytest.fixture(scope="session")
def forge_rows(forge_dir: Path) -> dict[str, ManifestClip]:
    rows = [json.loads(line) for line in (forge_dir / "manifest.jsonl").read_text().splitlines()]
    return {
        r["metadata"]["injected"][0]
        if r["metadata"]["injected"]
        else "clean": ManifestClip.model_validate(r)
        for r in rows
    }


@pytest.fixture(scope="session")
def shared_manifest() -> list[dict]:
    manifest = SHARED_CLIPS / "manifest.jsonl"
    if not manifest.is_file():
        pytest.skip(
            f"shared real clips not found at {SHARED_CLIPS} (they are not part of the repo)"
        )
    return [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, tmp_path):
    """No test sees a user's model settings or writes to the user's cache."""
    for name in (
        "GAZE_MODEL",
        "GAZE_BASE_URL",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GAZE_CACHE_DIR", str(tmp_path / "gaze-cache"))
