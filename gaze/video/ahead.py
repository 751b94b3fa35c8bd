"""An iterator run in a thread of its own, a few items ahead of its reader.

Decoding a frame (FFmpeg, which gives up the interpreter lock) and working on the frame before
it (scaling, encoding, measuring) can then share the cores; one after the other, FFmpeg's frame
threads sat idle while the frame before was scaled and encoded.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar, cast

T = TypeVar("T")

_END = object()
"""Put after the last item, or after the error that ended the items."""


class _Raised:
    """What ended the items early, handed to the reader to raise."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Ahead(Generic[T]):
    """Iterates ``items`` in a thread, at most ``depth`` items ahead of the reader; the reader
    gets the same items in the same order, and whatever ``items`` raised, at the point it was
    raised. A reader that stops early calls ``close``, which stops the thread and waits for it:
    what ``items`` reads from (a container, a decoder) may be closed after. The thread holds the
    iterator while it runs, so dropping it unclosed would not stop the thread
    (``VideoReader.pictures`` closes it in a ``finally``)."""

    def __init__(self, items: Iterator[T], depth: int, name: str = "gaze-ahead") -> None:
        if depth < 1:
            raise ValueError(f"depth must be at least 1, not {depth}")
        self._items = items
        self._queue: queue.Queue[object] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._started = False
        self._ended = False

    def _run(self) -> None:
        try:
            for item in self._items:
                if not self._put(item):
                    return
        except BaseException as exc:  # the reader raises it, where it would have been raised
            self._put(_Raised(exc))
            return
        finally:
            close = getattr(self._items, "close", None)
            if close is not None:  # a generator's own cleanup runs in the thread that ran it
                close()
        self._put(_END)

    def _put(self, item: object) -> bool:
        """Put ``item`` when there is room; False once the reader has stopped."""
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._ended:
            raise StopIteration
        if not self._started:
            self._started = True
            self._thread.start()
        item = self._queue.get()
        if item is _END:
            self._finish()
            raise StopIteration
        if isinstance(item, _Raised):
            self._finish()
            raise item.error
        return cast(T, item)

    def _finish(self) -> None:
        self._ended = True
        self._thread.join()

    def close(self) -> None:
        """Stop reading ahead and wait for the thread (idempotent)."""
        if self._ended:
            return
        self._ended = True
        self._stop.set()
        if self._started:
            self._thread.join()
