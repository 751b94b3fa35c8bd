"""A run's decoded clips: each clip is decoded once per run, however many nodes ask, and its
frames belong to that run (they are dropped when the run closes its store).

Frames never travel in graph state: state holds the path, nodes ask the run's store. Decoding
and the pixel pass run in a child process (``gaze.video.decode_process``), read by a worker
thread (never on the event loop: LangGraph's server refuses blocking calls there); concurrent
askers await the same futures.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from gaze.errors import GazeInputError
from gaze.video import decoder_pool
from gaze.video.decode_process import DecodeJob, DecodeRequest, PixelPass
from gaze.video.first_frame import read_first_frame
from gaze.video.spill import BlobStore
from gaze.video.windows import SamplingSettings, Window

if TYPE_CHECKING:  # the parent's first request waits for neither OpenCV nor NumPy (nor for
    # the event models: the pixel pass's events come after it)
    from gaze.schema.events import Event
    from gaze.video.clip import DecodedClip

PixelEvidence: TypeAlias = "tuple[Any, list[Event]]"
"""(signals, candidate events) as the store's pixel pass measured them."""

T = TypeVar("T")


class _Decoding:
    """One clip's decoding as it goes: windows handed over so far, then the clip, then (when
    asked) its pixel evidence. Everything here is touched on the event loop only."""

    def __init__(self, job: DecodeJob) -> None:
        loop = asyncio.get_running_loop()
        self.job = job
        self.handed: list[Window] = []
        self.all_handed = False
        """Every window of the clip is in ``handed`` (the child said so before the clip)."""
        self.grids: dict[int, bytes] = {}
        self.changed = asyncio.Event()
        self.first: asyncio.Future[bytes] = loop.create_future()
        """The first frame, when the job's request asks the child for it."""
        self.clip: asyncio.Future[DecodedClip] = loop.create_future()
        self.pixels: asyncio.Future[PixelEvidence] = loop.create_future()
        for future in (self.first, self.clip, self.pixels):  # a failure nobody awaited is not news
            future.add_done_callback(lambda f: f.cancelled() or f.exception())

    def set_first(self, jpeg: bytes | None, why: str | None) -> None:
        if self.first.done():
            return
        if jpeg is None:
            self.first.set_exception(GazeInputError(why or "no first frame"))
        else:
            self.first.set_result(jpeg)

    def add_window(self, window: Window, jpegs: dict[int, bytes], grid: bytes | None) -> None:
        # the frames themselves are in the job's store already (memory stays bounded)
        if grid is not None:
            self.grids[window.index] = grid
        self.handed.append(window)
        self.changed.set()

    def set_all_handed(self) -> None:
        self.all_handed = True
        self.changed.set()

    def set_clip(self, clip: DecodedClip) -> None:
        if not self.clip.done():
            self.clip.set_result(clip)
        self.changed.set()

    def set_pixels(self, signals: Any, events: list[Event]) -> None:
        if not self.pixels.done():
            self.pixels.set_result((signals, events))

    def delivered(self) -> bool:
        """Whether the job has handed over everything it was asked for."""
        asked: list[asyncio.Future[Any]] = [self.clip]
        if self.job.request.pixels is not None:
            asked.append(self.pixels)
        return all(f.done() for f in asked)

    def ended(self, error: BaseException | None) -> None:
        """The job is over: whatever it did not deliver fails with its error."""
        for future in (self.first, self.clip, self.pixels):
            if not future.done():
                future.set_exception(error or RuntimeError("decoding ended without a result"))
        self.changed.set()


class ClipStore:
    """Decoded clips, first frames and pixel evidence of one run, each computed once. Each clip
    is decoded by its own child process (``gaze.video.decode_process``), which also runs the
    pixel pass when the store was made with one (``gaze.pixels.measure.PIXEL_PASS``); its
    windows are handed over as they are encoded (``windows``)."""

    def __init__(self, sampling: SamplingSettings, pixel_pass: PixelPass | None = None) -> None:
        self.sampling = sampling
        self.pixel_pass = pixel_pass
        """Run beside every decoding (the run uses pixel evidence); None: decoding alone."""
        self.decodes = 0
        """How many decodes this store started (benchmarks and tests count them)."""
        self._tasks: dict[tuple[str, str], asyncio.Future[Any]] = {}
        self._decoding: dict[tuple[str, bool], _Decoding] = {}
        self._heavy_allowed = threading.Event()
        self._heavy_allowed.set()
        self._jobs: list[concurrent.futures.Future[None]] = []
        """Each decoding job in its thread (``decoder_pool.job_threads``): ``aclose`` waits for
        them, so the child a finished clip gives back is there for the next run's clip."""

    def hold_heavy(self) -> None:
        """Leave the decoded clips and pixel evidence in their children's pipes until
        ``release_heavy`` or until something asks for them: taking them in loads NumPy and
        OpenCV here (a tenth of a second of this process's interpreter lock), and a short
        clip's child delivers them while a command is still building its first request."""
        self._heavy_allowed.clear()

    def release_heavy(self) -> None:
        self._heavy_allowed.set()

    async def _once(self, kind: str, path: str, start: Callable[[], Awaitable[T]]) -> T:
        key = (kind, path)  # one run names its clip one way; no file-system call on the loop
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.ensure_future(start())
            self._tasks[key] = task
        result: T = await asyncio.shield(task)  # one asker cancelled never cancels the others
        return result

    async def first_frame(self, path: str) -> bytes:
        """The clip's first frame as grounding sends it (a JPEG at the run's largest side): from
        the clip's decoding child when its decoding found one at once, else read here in a
        thread of its own."""
        state = self._decoding.get((path, True)) or self._decoding.get((path, False))
        if state is not None and state.job.request.first_frame:
            return await asyncio.shield(state.first)
        max_side = self.sampling.max_side
        loop = asyncio.get_running_loop()
        threads = decoder_pool.first_frame_threads()
        return await self._once(
            "first", path, lambda: loop.run_in_executor(threads, read_first_frame, path, max_side)
        )

    def start(self, path: str, pixels: bool | None = None) -> _Decoding:
        """Start decoding ``path`` now (once per run; the first caller decides whether the
        pixel pass runs too, unless a later caller needs it). Call on the event loop."""
        pixels = self.pixel_pass is not None if pixels is None else pixels
        if pixels and self.pixel_pass is None:
            raise RuntimeError("this clip store was made without a pixel pass")
        found = self._decoding.get((path, True)) or (
            None if pixels else self._decoding.get((path, False))
        )
        if found is not None:  # a decoding with the pixel pass serves askers without it too
            return found
        self.decodes += 1
        loop = asyncio.get_running_loop()

        def later(fn: Callable[..., None]) -> Callable[..., None]:
            def call(*args: Any) -> None:
                with contextlib.suppress(RuntimeError):  # the run's loop is already closed
                    loop.call_soon_threadsafe(fn, *args)

            return call

        # a job that finds a child at once has the child read the first frame too
        first = decoder_pool.enter_job()
        try:
            request = DecodeRequest(path, self.sampling, self.pixel_pass if pixels else None, first)
            state = _Decoding(DecodeJob(request, self._heavy_allowed))
            work = decoder_pool.job_threads().submit(
                state.job.run,
                later(state.add_window),
                later(state.set_clip),
                later(state.set_pixels),
                later(state.set_first),
                later(state.set_all_handed),
            )
        except BaseException:
            decoder_pool.leave_job()
            raise
        work.add_done_callback(lambda _: decoder_pool.leave_job())  # over, or cancelled unrun
        self._jobs.append(work)
        self._decoding[(path, pixels)] = state

        async def run() -> None:
            error: BaseException | None = None
            try:
                await asyncio.wrap_future(work)
            except Exception as exc:
                error = exc
            finally:
                state.ended(error)

        self._tasks[(f"decode-pixels-{pixels}", path)] = asyncio.ensure_future(run())
        return state

    async def decoded(self, path: str) -> DecodedClip:
        """The decoded clip (frames encoded once), decoding it if no node has asked yet."""
        self.release_heavy()
        return await asyncio.shield(self.start(path).clip)

    async def pixel_evidence(self, path: str) -> PixelEvidence:
        self.release_heavy()
        return await asyncio.shield(self.start(path, pixels=True).pixels)

    async def windows(self, path: str) -> AsyncIterator[Window]:
        """Each window of the clip, in time order, as soon as its frames are encoded; the last
        ones when decoding ends, before the decoded clip (or with it, when the child could not
        hand them over). A window handed over early can differ from the decoded clip's window
        of that index (timestamps that contradict the frame count): callers that keep results
        compare."""
        state = self.start(path)
        seen = 0
        while True:
            while seen < len(state.handed):
                yield state.handed[seen]
                seen += 1
            if state.all_handed:
                return
            if state.clip.done():
                break
            self.release_heavy()  # the last windows may come with the clip
            state.changed.clear()
            await state.changed.wait()
        clip = await asyncio.shield(state.clip)
        handed = {w.index for w in state.handed}
        for window in clip.windows:
            if window.index not in handed:
                yield window

    def frames(self, path: str, window: Window) -> list[tuple[float, bytes]]:
        """The window's frames as ``window_frames`` gives them (read when a call needs them:
        a long clip's frames are not all held in memory)."""
        state = self.start(path)
        ready = state.clip.done() and not state.clip.cancelled() and not state.clip.exception()
        clip = state.clip.result() if ready else None
        if clip is not None and window in clip.windows:
            return frames_of(window, clip.jpegs, clip.grids.get(window.index))
        return frames_of(window, state.job.jpegs, state.grids.get(window.index))

    def close(self) -> None:
        """Drop every decoded frame (tasks still running are cancelled, children stopped)."""
        self.release_heavy()  # a job held before a clip's message reads on, and ends
        for state in self._decoding.values():
            if not state.delivered():  # a child that delivered all is kept for the next clip
                state.job.kill()
        for task in self._tasks.values():
            task.cancel()
        for work in self._jobs:
            work.cancel()  # one still waiting for a thread never starts
        self._tasks.clear()
        self._decoding.clear()

    async def aclose(self) -> None:
        """``close``, then wait for the decoding jobs that had started to end (a stopped one
        ends at once; one that delivered is giving its child back)."""
        self.close()
        jobs, self._jobs = self._jobs, []
        for work in jobs:
            if not work.cancelled():
                with contextlib.suppress(Exception):  # its error went to its askers
                    await asyncio.wrap_future(work)


def frames_of(
    window: Window, jpegs: Mapping[int, bytes] | BlobStore, grid: bytes | None
) -> list[tuple[float, bytes]]:
    """(time, jpeg) of every sampled frame of the window, in time order; in grid mode,
    [(time of its first tile, grid jpeg)]."""
    if grid is not None:
        return [(window.timestamps_s[0], grid)]
    return [(t, jpegs[i]) for i, t in zip(window.frame_indices, window.timestamps_s, strict=True)]


def window_frames(clip: DecodedClip, window_indices: list[int]) -> list[tuple[float, bytes]]:
    """(time, jpeg) of every sampled frame of the given windows, in time order; in grid mode,
    (time of its first tile, grid jpeg) of each window."""
    out = []
    for window in clip.windows:
        if window.index in window_indices:
            out += frames_of(window, clip.jpegs, clip.grids.get(window.index))
    return out


def window_frame_count(clip: DecodedClip, window_indices: list[int]) -> int:
    """How many images ``window_frames`` gives for those windows, without reading them."""
    return sum(
        window.images(window.index in clip.grids)
        for window in clip.windows
        if window.index in window_indices
    )
