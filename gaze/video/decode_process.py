"""Decoding and the pixel pass in a child process, windows handed back as they are encoded.

Why a process: decoding makes a few dozen OpenCV calls per frame, and each gives up and wins
back the interpreter lock; beside the imports and HTTP work of a starting run they took 2-3x
their own time (a 60 s clip: 0.47 s alone, 1.35 s in ``gaze diagnose``). In a child they run on
another core, and a decoder that crashes on a corrupt file takes only the child down.

Protocol (one clip at a time per child; children are reused, ``gaze.video.decoder_pool``): the
parent writes a pickled ``(DecodeRequest,)`` on the child's stdin; the child writes pickled
messages on its own copy of stdout, each behind a header of its length and kind (``_HEADER``):

- ``("first", jpeg or None, one line or None)`` first of all, when the request asks for the
  first frame (``read_first_frame``): the JPEG grounding sends, or why it could not be read;
- ``("window", Window, {frame index: jpeg}, grid jpeg or None)`` as each window completes,
  and for the windows still open when decoding ends;
- ``("handed",)`` once every window of the clip has been handed over (not sent when one of the
  last lacks a frame or grid that an earlier window took: they come with the clip);
- ``("clip", DecodedClip, {frame index: jpeg})`` when decoding ends: the clip without its
  analysis thumbnails (they stay in the child) and the JPEGs not yet handed over;
- ``("pixels", SignalSeries, [Event])`` after the pixel pass, when it was asked for (its
  per-frame signals are measured in a second thread while decoding goes on);
- ``("error", "input" | "internal", one line)`` instead of what could not be done;
- ``("done",)`` when it is ready for the next clip.

Run ``python -m gaze.video.decode_process`` only as the parent starts it.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import struct
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from gaze.cpu_priority import lower_this_thread
from gaze.errors import GazeInputError
from gaze.video import decoder_pool
from gaze.video.paths import check_video_path
from gaze.video.spill import BlobStore, FrameStore
from gaze.video.windows import SamplingSettings

if TYPE_CHECKING:  # the parent side needs neither OpenCV nor NumPy before its first request
    from gaze.video.clip import DecodedClip, WindowSink

_HEADER = struct.Struct("<Q8s")
"""Each message's length and kind (its first item, when that is a name): a reader can hold a
message before unpickling what would load NumPy in its process (``HEAVY``)."""
HEAVY = frozenset({"clip", "pixels"})
"""Messages whose contents (NumPy arrays) load NumPy and OpenCV where they are unpickled."""
DECODING_NICENESS = 5
"""The child runs a little below its parent (``gaze.cpu_priority``; its threads, the decoder's
own among them, inherit it): the parent's work before its first request (imports, the start-up
check) and each request it builds are the critical path, and on 2 cores the child's decoder
threads took CPU from them (the first request of a 30 s clip left 0.11 s later than beside a
child at nice 5, of a 60 s clip 0.06 s; the decoding still has every core the parent leaves
idle, and the graph's import, at nice 19, gives way to it)."""
SIGNALS_NICENESS = 10
"""The thread measuring pixel signals beside decoding runs at a lower priority still: the
router reads its results a call after the observers read the windows that decoding hands over.
Beside it at the same priority, a 60 s clip's decoding ended 0.25 s later on an idle 2-core
machine."""


class Meter(Protocol):
    """Measures each analysis thumbnail as decoding hands it over."""

    def add(self, thumb: Any) -> None: ...

    def series(self, frames: Any) -> Any: ...


@dataclass(frozen=True)
class PixelPass:
    """The work a decoding child does beside and after decoding: a meter fed every analysis
    thumbnail, then the measurement of the decoded clip. ``gaze.pixels.measure.PIXEL_PASS`` is
    the one in use; decoding knows no detector (it is pickled to the child by reference)."""

    meter: Callable[[], Meter]
    """Makes a fresh meter for one clip."""
    measure: Callable[[DecodedClip, Any], tuple[Any, list[Any]]]
    """(decoded clip, the meter's series) -> (signals, candidate findings), in the child."""
    events: Callable[[list[Any]], list[Any]]
    """The child's findings as report events, made in the parent: the child then loads none of
    the report's models after decoding, where a long clip's router call waits for it."""


@dataclass(frozen=True)
class DecodeRequest:
    path: str
    settings: SamplingSettings
    pixels: PixelPass | None
    """The pixel pass to run beside and after decoding, or None for decoding alone."""
    first_frame: bool = False
    """Send the first frame as grounding needs it before decoding the rest (the parent then
    never loads OpenCV for it, and has it before its SDK client is built)."""


class DecoderStopped(GazeInputError):
    """The child ended without finishing (killed, or the decoder crashed on the file)."""


def _send(out: IO[bytes], message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    kind = message[0] if isinstance(message[0], str) else ""
    out.write(_HEADER.pack(len(data), kind.encode()) + data)
    out.flush()


def _receive(
    source: IO[bytes], before: Callable[[str], None] | None = None
) -> tuple[Any, ...] | None:
    """The next message, or None at the end of the stream; ``before`` is called with the
    message's kind once it has been read and before it is unpickled."""
    head = source.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    length, kind = _HEADER.unpack(head)
    data = source.read(length)
    if len(data) < length:
        return None
    if before is not None:
        before(kind.rstrip(b"\0").decode())
    message: tuple[Any, ...] = pickle.loads(data)  # noqa: S301  (our own child's messages)
    return message


def _serve(request: DecodeRequest, out: IO[bytes]) -> None:
    """The child's work: the first frame if asked, decode, hand windows over, then the pixel
    pass."""
    from gaze.video.clip import open_clip
    from gaze.video.first_frame import read_first_frame

    if request.first_frame:
        try:
            _send(out, ("first", read_first_frame(request.path, request.settings.max_side), None))
        except GazeInputError as exc:
            _send(out, ("first", None, str(exc)))

    handed: set[int] = set()

    def hand_over(window: Any, jpegs: dict[int, bytes], grid: bytes | None) -> None:
        handed.add(window.index)
        _send(out, ("window", window, jpegs, grid))

    meter = request.pixels.meter() if request.pixels is not None else None
    try:
        with _Beside(meter.add if meter is not None else None) as measure:
            clip = open_clip(
                request.path, request.settings, encode=True, on_window=hand_over, on_thumb=measure
            )
            # before the meter has caught up (it gives way to decoding): the last window's
            # observer waits for these messages, and needs nothing the meter measures
            sent = _hand_over_the_rest(clip, handed, request.settings.grid, hand_over, out)
            rest = {i: clip.jpegs[i] for i in clip.jpegs if i not in sent}
            light = replace(clip, jpegs={}, analysis=replace(clip.analysis, thumbs=FrameStore()))
            _send(out, ("clip", light, rest))
    except GazeInputError as exc:
        _send(out, ("error", "input", str(exc)))
        return
    if request.pixels is not None and meter is not None:
        signals, events = request.pixels.measure(clip, meter.series(clip.analysis))
        _send(out, ("pixels", signals, events))


def _hand_over_the_rest(
    clip: DecodedClip,
    handed: set[int],
    grid: bool,
    hand_over: Callable[[Any, dict[int, bytes], bytes | None], None],
    out: IO[bytes],
) -> set[int]:
    """Hand over the windows still open when decoding ended, then say that every window has
    been (``"handed"``): their observers need not wait for the clip's message, which loads NumPy
    where it is read. Not when one of them lacks a frame or its grid, which a window handed
    earlier took with it (timestamps that contradict the frame count): the parent then takes
    them from the clip as before. Returns the frame indices handed over here."""
    last = [w for w in clip.windows if w.index not in handed]
    whole = all(i in clip.jpegs for w in last for i in w.frame_indices)
    if not whole or (grid and any(w.index not in clip.grids for w in last)):
        return set()
    for window in last:
        jpegs = {i: clip.jpegs[i] for i in window.frame_indices}
        hand_over(window, jpegs, clip.grids.get(window.index))
    _send(out, ("handed",))
    return {i for window in last for i in window.frame_indices}


class _Beside:
    """Runs ``work`` on each item in a thread of its own, beside the decoding loop that hands
    the items over (OpenCV releases the interpreter lock: the two share the cores), giving way
    to decoding where a core is wanted by both (``SIGNALS_NICENESS``)."""

    def __init__(self, work: Callable[[Any], None] | None) -> None:
        self.work = work
        self.items: queue.Queue[Any] = queue.Queue(maxsize=256)  # bounded: memory stays flat
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="gaze-signals", daemon=True)

    def _run(self) -> None:
        lower_this_thread(SIGNALS_NICENESS)
        while (item := self.items.get()) is not None:
            if self.error is None and self.work is not None:
                try:
                    self.work(item)
                except BaseException as exc:  # raised in the decoding thread at the end
                    self.error = exc

    def __enter__(self) -> Callable[[Any], None] | None:
        if self.work is None:
            return None
        self.thread.start()
        return self.items.put

    def __exit__(self, *exc: object) -> None:
        if self.work is None:
            return
        self.items.put(None)
        self.thread.join()
        if self.error is not None and exc[0] is None:
            raise self.error


OPENCV_THREADS = 1
"""OpenCV's own worker threads in a decoding child. Its pool (one thread per core by default)
spins while it waits for work, and beside the decoder's frame threads and the signal meter, on
2 cores, that CPU was taken from the parent's imports and requests: with one thread, a 30 or
60 s clip's whole ``gaze diagnose`` ended 0.06-0.07 s sooner (``bench/graph_latency.py
--against``, three paired runs). Decoding and the meter are already two threads; each OpenCV
call now runs in the thread that makes it, with the same results."""


def load_decoding() -> None:
    """Load what decoding needs (OpenCV, NumPy, PyAV) and set OpenCV up for a child. A child
    calls it as it starts, while the parent is still starting: the parent's modules leave these
    out so that its own first request need not wait for them."""
    import cv2

    import gaze.video.clip
    import gaze.video.first_frame
    import gaze.video.reader  # noqa: F401

    cv2.setNumThreads(OPENCV_THREADS)


def main() -> None:
    # the protocol gets its own copy of stdout; anything a library prints goes to stderr
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    lower_this_thread(DECODING_NICENESS)  # before its imports, which compete too
    load_decoding()
    while (request := _receive(sys.stdin.buffer)) is not None:  # one clip after another
        try:
            _serve(request[0], out)
        except Exception as exc:  # the parent reports it; the child has no one else to tell
            _send(out, ("error", "internal", f"{type(exc).__name__}: {exc}"))
        _send(out, ("done",))
    out.close()


class DecodeJob:
    """One clip decoded by a child process (``gaze.video.decoder_pool``). ``run`` blocks (call
    it in a worker thread); the callbacks are called from that thread as the child's messages
    arrive."""

    def __init__(
        self, request: DecodeRequest, heavy_allowed: threading.Event | None = None
    ) -> None:
        self.request = request
        self.heavy_allowed = heavy_allowed
        """While cleared, the decoded clip and pixel evidence wait in the pipe (``HEAVY``):
        taking them in loads NumPy and OpenCV in this process (``ClipStore.hold_heavy``)."""
        self._decoder: decoder_pool.Decoder | None = None
        self._killed = False
        self._finished = False
        self.jpegs = BlobStore()
        """Every sampled frame's JPEG received so far (the decoded clip's ``jpegs``)."""

    def run(
        self,
        on_window: WindowSink,
        on_clip: Callable[[DecodedClip], None],
        on_pixels: Callable[[Any, list[Any]], None],
        on_first: Callable[[bytes | None, str | None], None] | None = None,
        on_handed: Callable[[], None] | None = None,
    ) -> None:
        """Decode; raise GazeInputError (one line) for a file that cannot be decoded.
        ``on_first`` gets (jpeg, None) or (None, why) when the request asks for the first
        frame; ``on_handed`` is called once every window has gone to ``on_window``, before the
        clip when the child could hand them all over."""
        path = Path(self.request.path)
        check_video_path(path)
        if self._killed:
            return
        decoder = decoder_pool.take(stop=lambda: self._killed)
        if decoder is None:  # killed while waiting for a child
            return
        self._decoder = decoder
        try:
            if self._killed:  # kill() came while the child was being found
                return
            with contextlib.suppress(BrokenPipeError):  # it died: reading finds out how
                _send(decoder.requests, (self.request,))
            error = self._read(decoder.replies, on_window, on_clip, on_pixels, on_first, on_handed)
            if error is not None:
                raise error
            if not self._finished and not self._killed:
                raise DecoderStopped(
                    f"{path}: the decoder stopped before the end of the clip "
                    f"({decoder.last_words()})"
                )
        finally:
            decoder_pool.give_back(decoder, reusable=self._finished and not self._killed)

    def _read(
        self,
        source: IO[bytes],
        on_window: WindowSink,
        on_clip: Callable[[DecodedClip], None],
        on_pixels: Callable[[Any, list[Any]], None],
        on_first: Callable[[bytes | None, str | None], None] | None = None,
        on_handed: Callable[[], None] | None = None,
    ) -> Exception | None:
        """Read up to the child's "done"; the error it reported, if any."""
        error: Exception | None = None
        while (message := _receive(source, self._before)) is not None:
            kind = message[0]
            if kind == "first":
                if on_first is not None:
                    on_first(message[1], message[2])
            elif kind == "window":
                _, window, frames, grid = message
                for index, blob in frames.items():
                    self.jpegs[index] = blob
                on_window(window, frames, grid)
            elif kind == "handed":
                if on_handed is not None:
                    on_handed()
            elif kind == "clip":
                _, clip, rest = message
                for index, blob in rest.items():
                    self.jpegs[index] = blob
                on_clip(self._completed(replace(clip, jpegs=self.jpegs)))
            elif kind == "pixels" and self.request.pixels is not None:
                on_pixels(message[1], self.request.pixels.events(message[2]))
            elif kind == "error":
                what = message[2]
                error = (
                    GazeInputError(what)
                    if message[1] == "input"
                    else RuntimeError(f"decoding {self.request.path} failed: {what}")
                )
            elif kind == "done":
                self._finished = True
                return error
        return error

    def _before(self, kind: str) -> None:
        if kind in HEAVY and self.heavy_allowed is not None:
            self.heavy_allowed.wait()

    def _completed(self, clip: DecodedClip) -> DecodedClip:
        """In grid mode, the grid of a window decoding saw otherwise than it handed it over (its
        frames are here, no longer in the child)."""
        settings = self.request.settings
        missing = [w for w in clip.windows if settings.grid and w.index not in clip.grids]
        if not missing:
            return clip
        from gaze.video.grid import window_grids

        grids = window_grids(missing, self.jpegs, settings.max_side, settings.jpeg_quality)
        return replace(clip, grids={**clip.grids, **grids})

    def kill(self) -> None:
        """Stop the child (a run that closes before its clip is decoded)."""
        self._killed = True
        if self._decoder is not None:
            self._decoder.kill()


if __name__ == "__main__":
    main()
