"""Decoding in a child process: windows handed over while decoding goes on, the same clip and
pixel evidence as decoding here, and a one-line error for a file or a decoder that fails."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from gaze.bench.forge import forge_clip
from gaze.errors import GazeInputError
from gaze.pixels.measure import PIXEL_PASS, measure_pixels
from gaze.video.clip import open_clip
from gaze.video.decode_process import DecoderStopped
from gaze.video.store import ClipStore, window_frames
from gaze.video.windows import SamplingSettings
from tests.fresh import python_output


@pytest.fixture(scope="module")
def long_clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    video = tmp_path_factory.mktemp("long") / "long.mp4"
    forge_clip(video, seed=5, failures=["frame_corruption"], duration_s=33.0)
    return video


@pytest.mark.parametrize("grid", [False, True])
def test_windows_are_handed_over_while_decoding_and_equal_the_decoded_ones(long_clip, grid):
    settings = SamplingSettings(grid=grid)
    handed = []
    clip = open_clip(long_clip, settings, encode=True, on_window=lambda *w: handed.append(w))
    plain = open_clip(long_clip, settings, encode=True)
    # 33 s in 4 s windows: 9 windows, the last still open when decoding ends
    assert [w.index for w, _, _ in handed] == list(range(8)) and len(clip.windows) == 9
    for window, jpegs, grid_jpeg in handed:
        assert window == clip.windows[window.index] == plain.windows[window.index]
        assert jpegs == {i: plain.jpegs[i] for i in window.frame_indices}
        assert grid_jpeg == (plain.grids[window.index] if grid else None)
    assert clip.grids == plain.grids


def _through_store(video: Path, settings: SamplingSettings) -> tuple:
    async def run() -> tuple:
        store = ClipStore(settings, PIXEL_PASS)
        try:
            windows = [w async for w in store.windows(str(video))]
            frames = [store.frames(str(video), w) for w in windows]
            clip = await store.decoded(str(video))
            return windows, frames, clip, await store.pixel_evidence(str(video)), store.decodes
        finally:
            store.close()

    return asyncio.run(run())


def test_the_child_gives_the_clip_and_pixel_evidence_that_decoding_here_gives(long_clip):
    settings = SamplingSettings()
    windows, frames, clip, (signals, events), decodes = _through_store(long_clip, settings)
    here = open_clip(long_clip, settings, encode=True)
    here_signals, here_events = measure_pixels(here)
    assert decodes == 1  # the clip and its pixel evidence came from one decoding
    assert clip.info == here.info and clip.windows == here.windows == windows
    assert frames == [window_frames(here, [w.index]) for w in here.windows]
    assert np.array_equal(clip.initial_frame, here.initial_frame)
    assert events == here_events and events  # the injected corruption is found
    assert np.array_equal(signals.motion, here_signals.motion)
    assert np.array_equal(signals.frame_diff, here_signals.frame_diff)


def test_a_file_that_is_not_a_video_fails_in_one_line(tmp_path):
    fake = tmp_path / "notes.mp4"
    fake.write_text("these are notes, not a video\n" * 50)
    with pytest.raises(GazeInputError) as here:
        open_clip(fake)
    with pytest.raises(GazeInputError) as child:
        _through_store(fake, SamplingSettings())
    assert str(child.value) == str(here.value) and "\n" not in str(child.value)


def test_a_decoder_that_dies_fails_its_clip_in_one_line(long_clip):
    async def run() -> None:
        store = ClipStore(SamplingSettings(), PIXEL_PASS)
        state = store.start(str(long_clip))
        try:
            async for _ in store.windows(str(long_clip)):  # the child is decoding: kill it
                proc = state.job._decoder.proc
                assert proc is not None
                proc.kill()
                break
            await store.decoded(str(long_clip))
        finally:
            store.close()

    with pytest.raises(DecoderStopped) as stopped:
        asyncio.run(run())
    message = str(stopped.value)
    assert str(long_clip) in message and "decoder stopped" in message and "\n" not in message
    assert isinstance(stopped.value, GazeInputError)  # exit 2 from the CLI, like any bad file


def test_closing_the_store_stops_its_child(long_clip):
    seen = threading.Event()

    async def run() -> object:
        store = ClipStore(SamplingSettings(), PIXEL_PASS)
        state = store.start(str(long_clip))
        async for _ in store.windows(str(long_clip)):
            seen.set()
            break
        store.close()  # a run that ends (or fails) before its clip is decoded
        proc = state.job._decoder.proc
        await asyncio.to_thread(proc.wait, 10)
        return proc.returncode

    code = asyncio.run(run())
    assert seen.is_set() and code is not None and code != 0


def test_an_error_measuring_beside_decoding_is_raised_not_lost():
    from gaze.video.decode_process import _Beside

    measured: list[int] = []

    def measure(item: int) -> None:
        if item == 3:
            raise ValueError("thumbnail 3 has no pixels")
        measured.append(item)

    with pytest.raises(ValueError, match="thumbnail 3"), _Beside(measure) as put:
        assert put is not None
        for item in range(6):
            put(item)
    assert measured == [0, 1, 2]  # nothing measured after the error


@pytest.mark.skipif(sys.platform != "linux", reason="only Linux keeps a priority per thread")
def test_signals_are_measured_at_a_lower_priority_than_decoding():
    """The router reads the signals a call after the observers read the windows: on busy cores
    the measuring thread gives way to decoding, which keeps its own priority."""
    from gaze.cpu_priority import this_thread_niceness
    from gaze.video.decode_process import SIGNALS_NICENESS, _Beside

    decoding = this_thread_niceness()
    measured: list[int] = []
    with _Beside(lambda item: measured.append(this_thread_niceness())) as put:
        assert put is not None
        put(0)
    assert measured == [min(19, decoding + SIGNALS_NICENESS)] and SIGNALS_NICENESS > 0
    assert this_thread_niceness() == decoding


def _child_that_decoded(tmp_path: Path) -> Path:
    """``/proc/<pid>`` of the child that decoded a 3 s clip (and now waits, idle, for the next)."""
    video = tmp_path / "clip.mp4"
    forge_clip(video, seed=3, failures=[], duration_s=3.0)

    async def decoded_by() -> int:
        store = ClipStore(SamplingSettings(), PIXEL_PASS)
        state = store.start(str(video))
        try:
            await store.pixel_evidence(str(video))
            return state.job._decoder.proc.pid
        finally:
            await store.aclose()

    return Path(f"/proc/{asyncio.run(decoded_by())}")


@pytest.mark.skipif(sys.platform != "linux", reason="only Linux keeps a nice value per thread")
def test_the_child_decodes_below_its_parents_priority(tmp_path):
    """The parent's imports and request building are the critical path: the child and every
    thread it starts (the decoder's own, the signal meter) give way to them."""
    from gaze.cpu_priority import MAX_NICENESS, this_thread_niceness
    from gaze.video.decode_process import DECODING_NICENESS

    child = _child_that_decoded(tmp_path)
    pid = int(child.name)
    niceness = {
        int(task.name): int((task / "stat").read_text().rsplit(")", 1)[1].split()[16])
        for task in (child / "task").iterdir()
    }
    decoding = min(MAX_NICENESS, this_thread_niceness() + DECODING_NICENESS)
    assert DECODING_NICENESS > 0 and niceness[pid] == decoding  # the child's main thread
    assert all(value >= decoding for value in niceness.values())


def test_a_child_makes_its_opencv_calls_in_the_thread_that_asks():
    """OpenCV's pool spins while it waits, on cores the parent's imports and requests want."""
    script = (
        "import cv2; cv2.setNumThreads(4)\n"
        "from gaze.video.decode_process import load_decoding; load_decoding()\n"
        "print(cv2.getNumThreads())"
    )
    assert python_output(script, timeout=60).strip() == "1"


def test_the_clip_goes_to_the_parent_before_the_signals_have_caught_up(tmp_path, monkeypatch):
    """The last window's observer waits for the clip's message, not for the meter, which gives
    way to decoding and may lag behind it; the pixels follow once it has caught up."""
    import io

    from gaze.video import decode_process

    video = tmp_path / "clip.mp4"
    forge_clip(video, seed=2, failures=[], duration_s=6.0)
    release = threading.Event()
    give_up = time.monotonic() + 5.0  # where the clip waited for the meter: fail, not hang

    class HeldMeter:
        def __init__(self) -> None:
            self.measured = 0

        def add(self, thumb: object) -> None:
            release.wait(max(0.0, give_up - time.monotonic()))
            self.measured += 1

        def series(self, frames: object) -> int:
            return self.measured

    meters: list[HeldMeter] = []

    def meter() -> HeldMeter:
        meters.append(HeldMeter())
        return meters[-1]

    sent: list[tuple[str, int]] = []

    def send(out: object, message: tuple) -> None:
        sent.append((message[0], meters[0].measured if meters else -1))
        if message[0] == "clip":
            release.set()

    monkeypatch.setattr(decode_process, "_send", send)
    pixels = decode_process.PixelPass(
        meter=meter, measure=lambda clip, series: (series, []), events=list
    )
    request = decode_process.DecodeRequest(str(video), SamplingSettings(), pixels)
    decode_process._serve(request, io.BytesIO())
    kinds = [kind for kind, _ in sent]
    # 6 s in 4 s windows: the first as the second began, the second as decoding ended, then
    # word that every window is out (the last observer call waits for no clip)
    assert kinds == ["window", "window", "handed", "clip", "pixels"]
    assert dict(sent)["clip"] == 0 and dict(sent)["pixels"] > 0  # every thumbnail, after


@pytest.mark.parametrize(
    ("jpegs", "grids", "grid", "handed_here"),
    [
        ({3: b"c", 4: b"d"}, {}, False, [2]),  # window 2 whole: handed over, then "handed"
        ({4: b"d"}, {}, False, []),  # frame 3 left with window 1: the clip brings window 2
        ({3: b"c", 4: b"d"}, {}, True, []),  # no grid for window 2: the same
        ({3: b"c", 4: b"d"}, {2: b"g"}, True, [2]),
    ],
)
def test_the_windows_open_at_the_end_go_before_the_clip_only_when_whole(
    jpegs, grids, grid, handed_here
):
    import io
    from types import SimpleNamespace

    from gaze.video.decode_process import _hand_over_the_rest, _receive
    from gaze.video.windows import Window

    windows = [Window(1, 4.0, 8.0, [1, 2], [4.0, 5.0]), Window(2, 8.0, 9.0, [3, 4], [8.0, 8.5])]
    clip = SimpleNamespace(windows=windows, jpegs=jpegs, grids=grids)
    out, calls = io.BytesIO(), []
    sent = _hand_over_the_rest(clip, {1}, grid, lambda *call: calls.append(call), out)
    assert [window.index for window, _, _ in calls] == handed_here
    assert sent == ({3, 4} if handed_here else set())
    assert calls == [(windows[1], {3: b"c", 4: b"d"}, grids.get(2))] * len(handed_here)
    out.seek(0)
    assert _receive(out) == (("handed",) if handed_here else None)


def test_a_child_serves_the_next_clip_unless_it_was_stopped(long_clip, tmp_path):
    from gaze.video import decoder_pool

    fake = tmp_path / "notes.mp4"
    fake.write_text("not a video\n" * 50)

    async def pid_after(video: Path, kill: bool = False) -> int:
        store = ClipStore(SamplingSettings(), PIXEL_PASS)
        state = store.start(str(video))
        try:
            if kill:
                async for _ in store.windows(str(video)):
                    break
                pid = state.job._decoder.proc.pid
                store.close()
                return pid
            with contextlib.suppress(GazeInputError):
                await store.pixel_evidence(str(video))
            return state.job._decoder.proc.pid
        finally:
            await store.aclose()  # as a run closes it: its child is back before the next run

    first = asyncio.run(pid_after(long_clip))
    after_bad_file = asyncio.run(pid_after(fake))  # a clean one-line refusal: still reusable
    killed = asyncio.run(pid_after(long_clip, kill=True))
    after_kill = asyncio.run(pid_after(long_clip))
    assert first == after_bad_file == killed  # one warm child served all three
    assert after_kill != killed  # a child stopped mid-clip is never handed out again
    assert all(d.alive() for d in decoder_pool._idle)


def test_clips_past_the_busy_limit_wait_for_a_child(long_clip, monkeypatch):
    from gaze.video import decoder_pool

    monkeypatch.setattr(decoder_pool, "_busy", threading.BoundedSemaphore(1))

    async def both() -> list[int]:
        stores = [ClipStore(SamplingSettings(), PIXEL_PASS) for _ in range(2)]
        states = [store.start(str(long_clip)) for store in stores]
        try:
            await asyncio.gather(*(store.pixel_evidence(str(long_clip)) for store in stores))
            return [state.job._decoder.proc.pid for state in states]
        finally:
            for store in stores:
                store.close()

    first, second = asyncio.run(both())
    assert first == second  # one child decoded both clips, one after the other


def test_a_grid_the_child_could_not_make_is_made_from_the_frames_handed_over(long_clip):
    import io
    from dataclasses import replace

    from gaze.video.decode_process import DecodeJob, DecodeRequest, _send
    from gaze.video.grid import window_grid
    from gaze.video.windows import Window

    settings = SamplingSettings(grid=True)
    here = open_clip(long_clip, settings, encode=True)
    handed = here.windows[1]
    # decoding saw window 1 end earlier than it was handed over (its frames left the child)
    decoded = Window(
        1, handed.start_s, handed.end_s - 0.5, handed.frame_indices[:-2], handed.timestamps_s[:-2]
    )
    stream = io.BytesIO()
    frames = {i: here.jpegs[i] for i in handed.frame_indices}
    _send(stream, ("window", handed, frames, here.grids[1]))
    rest = {i: here.jpegs[i] for w in here.windows if w.index != 1 for i in w.frame_indices}
    light = replace(
        here,
        windows=[here.windows[0], decoded, *here.windows[2:]],
        jpegs={},
        grids={k: v for k, v in here.grids.items() if k != 1},
    )
    _send(stream, ("clip", light, rest))
    _send(stream, ("done",))
    stream.seek(0)
    got = []
    job = DecodeJob(DecodeRequest(str(long_clip), settings, pixels=None))
    assert job._read(stream, lambda *a: None, got.append, lambda *a: None) is None
    grid = got[0].grids[1]
    frames_kept = [here.jpegs[i] for i in decoded.frame_indices]
    assert grid == window_grid(frames_kept, decoded.timestamps_s, 768, 85) != here.grids[1]
    assert got[0].grids[0] == here.grids[0]


def test_clips_waiting_for_a_decoder_leave_the_default_threads_free(forge_dir, tmp_path):
    """Many clips in flight wait for one of the few decoding children in threads of their own:
    the event loop's default threads (the first frame grounding needs, the response cache, the
    report files) never queue behind them. They did: with twelve clips asked for, the last
    clip's first frame came only after at least seven clips had decoded."""
    source = sorted(forge_dir.glob("*.mp4"))[0]
    videos = []
    for n in range(12):
        copy = tmp_path / f"clip-{n}.mp4"
        copy.write_bytes(source.read_bytes())
        videos.append(str(copy))

    async def run() -> int:
        store = ClipStore(SamplingSettings())
        try:
            decodes = [asyncio.ensure_future(store.decoded(v)) for v in videos]
            for _ in range(3):  # every clip's decoding job handed to its threads
                await asyncio.sleep(0)
            await store.first_frame(videos[-1])
            decoded_by_then = sum(d.done() for d in decodes)
            await asyncio.gather(*decodes)
            return decoded_by_then
        finally:
            await store.aclose()  # as a run closes it: its children are back for the next test

    assert asyncio.run(run()) < 6


def test_first_frames_of_many_clips_leave_the_default_threads_free(forge_dir, monkeypatch):
    """A run of many clips asks every clip's first frame at once; the reads wait in threads of
    their own, so the event loop's default threads (where the SDK's first connection looks up
    its address) stay free. In the default executor, 144 clips in flight held the first request
    1 s between the SDK sending it and the server seeing it."""
    import gaze.video.store as store_module

    source = str(sorted(forge_dir.glob("*.mp4"))[0])
    read = store_module.read_first_frame
    gate = threading.Event()

    def held(path: str, max_side: int) -> bytes:
        gate.wait(10)  # every read blocked until the default threads have answered
        return read(source, max_side)

    monkeypatch.setattr(store_module, "read_first_frame", held)

    async def run() -> list[bytes]:
        store = ClipStore(SamplingSettings(max_side=160))
        try:
            asked = [asyncio.ensure_future(store.first_frame(f"clip-{n}.mp4")) for n in range(12)]
            await asyncio.sleep(0.05)  # each read handed to a thread
            assert await asyncio.wait_for(asyncio.to_thread(lambda: "free"), 2) == "free"
            gate.set()
            return await asyncio.gather(*asked)
        finally:
            gate.set()
            await store.aclose()

    frames = asyncio.run(run())
    image = cv2.imdecode(np.frombuffer(frames[0], np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and max(image.shape[:2]) == 160  # a JPEG at the run's largest side
    assert len(set(frames)) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="reads the child's threads in /proc")
@pytest.mark.parametrize(("ours", "child_sees"), [(None, "1"), ("3", "3")])
def test_a_child_starts_no_blas_threads_unless_told_to(tmp_path, monkeypatch, ours, child_sees):
    """OpenBLAS starts a thread per core as NumPy loads, and they spin on the cores the parent
    wants; the child multiplies no matrices. A setting of the user's own goes through."""
    from gaze.video import decoder_pool
    from gaze.video.decoder_pool import BLAS_THREADS_ENV

    decoder_pool._close_idle()  # a new child, started with this environment
    if ours is None:
        monkeypatch.delenv(BLAS_THREADS_ENV, raising=False)
    else:
        monkeypatch.setenv(BLAS_THREADS_ENV, ours)
    child = _child_that_decoded(tmp_path)
    environ, threads = (child / "environ").read_text(), list((child / "task").iterdir())
    assert f"\0{BLAS_THREADS_ENV}={child_sees}\0" in f"\0{environ}"
    if ours is None:  # decoded, the child waits for its next clip in its one thread
        assert len(threads) == 1, threads


@pytest.mark.skipif(sys.platform != "linux", reason="only Linux pipes can be widened")
def test_a_child_hands_over_a_whole_clip_without_waiting_for_the_parent_to_read(tmp_path):
    """Each window's message is about 150 KB: in a default 64 KiB pipe the decoding thread
    stopped at every window until the parent read it, and a starting run's parent reads late
    (LangGraph's import holds its interpreter lock). The child's reply pipe holds a short
    clip's every message: it finishes, and exits once its requests end, before a byte is
    read."""
    import fcntl
    import struct
    import termios

    from gaze.video import decoder_pool
    from gaze.video.decode_process import DecodeRequest, _receive, _send

    allowed = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    if allowed < decoder_pool.REPLY_PIPE_BYTES:
        pytest.skip(f"this kernel lets a pipe hold at most {allowed} bytes")
    video = tmp_path / "clip.mp4"
    forge_clip(video, seed=3, failures=["object_teleportation"], duration_s=8.0)
    decoder = decoder_pool.Decoder()
    try:
        held = fcntl.fcntl(decoder.replies.fileno(), fcntl.F_GETPIPE_SZ)
        assert held == decoder_pool.REPLY_PIPE_BYTES
        request = DecodeRequest(str(video), SamplingSettings(), PIXEL_PASS)
        _send(decoder.requests, (request,))
        decoder.requests.close()  # the child exits after this clip
        decoder.proc.wait(timeout=60)  # with nothing read: it would wait at its first window
        waiting = fcntl.ioctl(decoder.replies.fileno(), termios.FIONREAD, bytes(4))
        sent = struct.unpack("i", waiting)[0]  # every byte the child wrote, still in the pipe
        messages = []
        while (message := _receive(decoder.replies)) is not None:
            messages.append(message)
    finally:
        decoder.close()
    kinds = [m[0] for m in messages]
    assert kinds.count("window") >= 2 and kinds[-3:] == ["clip", "pixels", "done"]
    assert 64 * 1024 < sent <= decoder_pool.REPLY_PIPE_BYTES
