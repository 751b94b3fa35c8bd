"""Frame stores that spill to disk past a memory budget read back exactly what was stored, and
the pixel evidence of a clip is the same whether its frames sit in memory or on disk."""

from __future__ import annotations

import numpy as np

from gaze.video import spill
from gaze.video.spill import BlobStore, FrameStore


def test_frames_past_the_budget_go_to_disk_and_read_back_exactly():
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 255, (12, 16, 3), dtype=np.uint8) for _ in range(50)]
    store = FrameStore(budget_bytes=10 * frames[0].nbytes)
    for frame in frames:
        store.append(frame)
    assert len(store) == 50 and store.shape == (50, 12, 16, 3)
    assert len(store._memory) == 10 and store._spilled == 40
    for i in (0, 9, 10, 49, -1):
        assert np.array_equal(store[i], frames[i])
    subset = store[np.array([3, 20, 41])]
    assert subset.shape == (3, 12, 16, 3)
    assert np.array_equal(subset[2], frames[41]) and np.array_equal(subset[[1]][0], frames[20])


def test_blobs_past_the_budget_go_to_disk():
    store = BlobStore(budget_bytes=100)
    for key in range(20):
        store[key * 3] = bytes([key]) * 30
    assert len(store) == 20 and store[57] == bytes([19]) * 30 and 30 in store
    assert sorted(store) == [k * 3 for k in range(20)]


def test_pixel_evidence_is_the_same_from_disk(forge_dir, forge_rows, monkeypatch):
    from gaze.pixels.measure import measure_pixels
    from gaze.video.clip import open_clip

    video = forge_dir / forge_rows["object_teleportation"].video
    in_memory = measure_pixels(open_clip(video))
    monkeypatch.setattr(spill, "MEMORY_BUDGET_BYTES", 1)  # every frame on disk
    on_disk_clip = open_clip(video)
    assert on_disk_clip.analysis.thumbs._spilled == len(on_disk_clip.analysis.thumbs)
    on_disk = measure_pixels(on_disk_clip)
    assert [e.model_dump() for e in on_disk[1]] == [e.model_dump() for e in in_memory[1]]
    assert np.array_equal(on_disk[0].motion, in_memory[0].motion)


def test_the_local_change_scan_keeps_only_the_steps_near_it():
    """The scan looks one step either side of the one it judges; steps further back are
    dropped, so its memory does not grow with the clip (every step used to be kept)."""
    from types import SimpleNamespace

    from gaze.pixels.change_regions import ChangeSteps
    from gaze.pixels.motion import aligned_step

    rng = np.random.default_rng(0)
    thumbs = rng.integers(0, 255, (40, 24, 32, 3), dtype=np.uint8)
    steps = ChangeSteps(SimpleNamespace(thumbs=thumbs))  # type: ignore[arg-type]
    held = []
    for i in range(1, len(thumbs)):
        for j in (i - 1, i, i + 1):
            if 1 <= j < len(thumbs):
                step = steps[j]
        held.append(len(steps.cache))
    assert max(held) <= ChangeSteps.KEEP + 2
    again = aligned_step(thumbs[38], thumbs[39])
    assert (step.changed == again.changed).all() and step.shift == again.shift
