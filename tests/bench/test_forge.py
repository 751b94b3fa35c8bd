import json

import numpy as np
import pytest

from gaze.bench.forge import KINDS, forge_frames, forge_set
from gaze.bench.forge.demo import DEMO_FAILURES, DEMO_SEED
from gaze.errors import GazeInputError
from gaze.schema.manifest import ManifestClip


def test_forge_is_deterministic_for_a_seed():
    a_frames, fps, instruction, a_events = forge_frames(11, ["object_teleportation", "blur"])
    b_frames, _, _, b_events = forge_frames(11, ["object_teleportation", "blur"])
    assert fps == 10.0 and instruction.startswith("put the ")
    assert a_events == b_events
    assert all(np.array_equal(a, b) for a, b in zip(a_frames, b_frames, strict=True))
    c_frames, _, _, _ = forge_frames(12, ["object_teleportation", "blur"])
    assert not np.array_equal(a_frames[0], c_frames[0])


def test_forge_events_are_exact_and_do_not_overlap():
    kinds = ["object_teleportation", "object_hallucination", "frame_corruption", "blur"]
    _, fps, _, events = forge_frames(4, kinds)
    assert sorted(e["type"] for e in events) == sorted(kinds)
    spans = sorted((e["start_s"], e["end_s"]) for e in events)
    assert all(prev[1] < nxt[0] for prev, nxt in zip(spans, spans[1:], strict=False))
    for e in events:
        assert round(e["start_s"] * fps, 6).is_integer() and round(e["end_s"] * fps, 6).is_integer()


def test_forge_set_writes_clips_and_a_valid_manifest(forge_dir):
    lines = (forge_dir / "manifest.jsonl").read_text().splitlines()
    rows = [ManifestClip.model_validate(json.loads(line)) for line in lines]
    assert len(rows) == len(KINDS)
    assert [r.metadata["injected"] for r in rows] == [[] if k == "clean" else [k] for k in KINDS]
    for row in rows:
        assert (forge_dir / row.video).is_file()
        assert row.generator == "gaze-forge" and row.fps == 10.0 and row.duration_s == 8.0
        assert len(row.events) == (0 if row.metadata["injected"] == [] else 1)


def test_forge_set_same_seed_same_manifest(tmp_path):
    a = forge_set(tmp_path / "a", 3, seed=9)
    b = forge_set(tmp_path / "b", 3, seed=9)
    assert [r.model_dump() for r in a] == [r.model_dump() for r in b]


def test_unknown_failure_and_bad_count_are_input_errors(tmp_path):
    with pytest.raises(GazeInputError, match="cannot inject"):
        forge_frames(1, ["melting"])
    with pytest.raises(GazeInputError, match="at least 1"):
        forge_set(tmp_path, 0, 1)


def test_shipped_demo_matches_its_recipe():
    from importlib import resources

    meta = json.loads((resources.files("gaze") / "assets" / "demo.json").read_text())
    _, _, instruction, events = forge_frames(DEMO_SEED, DEMO_FAILURES)
    assert meta["instruction"] == instruction
    assert [(e["type"], e["start_s"], e["end_s"]) for e in meta["events"]] == [
        (e["type"], e["start_s"], e["end_s"]) for e in events
    ]
