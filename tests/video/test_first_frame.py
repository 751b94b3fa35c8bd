"""The first frame grounding sends comes from the clip's decoding child when that child is free
(the parent then loads neither OpenCV nor NumPy before its first request), from a thread of the
parent when the clip waits behind others; the same JPEG and the same one-line errors either way.
A store held for a command's first request takes in no decoded clip until it is released or
asked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import gaze.video.store as store_module
from gaze.bench.forge import forge_clip
from gaze.errors import GazeInputError
from gaze.video import decoder_pool
from gaze.video.first_frame import read_first_frame
from gaze.video.store import ClipStore
from gaze.video.windows import SamplingSettings

SAMPLING = SamplingSettings(max_side=200)


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    video = tmp_path_factory.mktemp("first") / "clip.mp4"
    forge_clip(video, seed=4, failures=[], duration_s=6.0)
    return video


def _no_parent_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []

    def counted(path: str, max_side: int) -> bytes:
        reads.append(path)
        return read_first_frame(path, max_side)

    monkeypatch.setattr(store_module, "read_first_frame", counted)
    return reads


async def _first_of(path: Path) -> bytes:
    store = ClipStore(SAMPLING)
    try:
        store.start(str(path))
        return await store.first_frame(str(path))
    finally:
        await store.aclose()


def test_a_free_child_reads_the_first_frame(clip, monkeypatch):
    reads = _no_parent_reads(monkeypatch)
    jpeg = asyncio.run(_first_of(clip))
    assert jpeg == read_first_frame(str(clip), SAMPLING.max_side)
    assert reads == []  # the child read it, not a thread of this process


def test_a_clip_queued_behind_others_reads_its_first_frame_here(clip, monkeypatch):
    reads = _no_parent_reads(monkeypatch)
    busy = decoder_pool.MAX_BUSY
    monkeypatch.setattr(decoder_pool, "_jobs_in", busy)  # as many other clips' jobs in as can be
    jpeg = asyncio.run(_first_of(clip))
    assert jpeg == read_first_frame(str(clip), SAMPLING.max_side)
    assert reads == [str(clip)]
    assert decoder_pool._jobs_in == busy  # this clip's job counted out once it was over


def test_a_file_that_is_not_a_video_fails_the_same_way_from_the_child(tmp_path, monkeypatch):
    fake = tmp_path / "notes.mp4"
    fake.write_text("these are notes, not a video\n" * 50)
    reads = _no_parent_reads(monkeypatch)
    with pytest.raises(GazeInputError) as here:
        read_first_frame(str(fake), SAMPLING.max_side)
    with pytest.raises(GazeInputError) as child:
        asyncio.run(_first_of(fake))
    assert str(child.value) == str(here.value) and "\n" not in str(child.value)
    assert reads == []


def test_a_held_store_takes_in_the_clip_only_once_released_or_asked(clip):
    """Every window, the last ones too, comes without the clip (whose message loads NumPy here):
    a clip's last observer call need not wait for it."""

    async def run() -> tuple[bool, int, bool, bool]:
        store = ClipStore(SAMPLING)
        try:
            store.hold_heavy()
            state = store.start(str(clip))
            await store.first_frame(str(clip))
            await asyncio.sleep(1.5)  # a warm child decodes 6 s of video in a fraction of that
            held = not state.clip.done()
            windows = [w async for w in store.windows(str(clip))]
            still_held = not state.clip.done()
            decoded = await store.decoded(str(clip))  # asking releases the hold
            return held, len(windows), still_held, decoded.windows == windows
        finally:
            await store.aclose()

    held, windows, still_held, same = asyncio.run(run())
    assert held and still_held and same
    assert windows == 2  # 6 s in 4 s windows, the last one as decoding ended


def test_closing_a_held_store_ends_its_job(clip):
    async def run() -> None:
        store = ClipStore(SAMPLING)
        store.hold_heavy()
        store.start(str(clip))
        await store.first_frame(str(clip))
        await asyncio.wait_for(store.aclose(), 10)  # the held job reads on and ends

    asyncio.run(run())
    assert decoder_pool._jobs_in == 0
