"""Reading ahead in a thread: the same items in the same order, errors where they were raised, at
most ``depth`` items ahead, and a reader that stops early stops the thread before it returns."""

import threading
import time
from collections.abc import Iterator

import pytest

from gaze.video.ahead import Ahead


def test_the_reader_gets_every_item_in_order():
    assert list(Ahead(iter(range(1000)), depth=3)) == list(range(1000))
    assert list(Ahead(iter([]), depth=1)) == []


def test_an_error_reaches_the_reader_after_the_items_before_it():
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise OSError("the file broke off")

    got = []
    with pytest.raises(OSError, match="broke off"):
        for item in Ahead(items(), depth=4):
            got.append(item)
    assert got == [1, 2]


def test_it_reads_at_most_depth_items_ahead():
    made = []

    def items() -> Iterator[int]:
        for i in range(100):
            made.append(i)
            yield i

    ahead = Ahead(items(), depth=3)
    assert next(ahead) == 0
    deadline = time.monotonic() + 5
    while len(made) < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)  # time enough to run further ahead, were it not bounded
    # the one handed over, three queued, and one made and waiting for room
    assert len(made) == 1 + 3 + 1
    ahead.close()


def test_a_reader_that_stops_early_stops_the_thread_and_the_items_cleanup_runs():
    cleaned = threading.Event()

    def items() -> Iterator[int]:
        try:
            yield from range(10**9)
        finally:
            cleaned.set()

    ahead = Ahead(items(), depth=2, name="test-ahead")
    for item in ahead:
        if item == 5:
            break
    ahead.close()
    assert cleaned.is_set()  # the generator was closed before close() returned
    assert not any(t.name == "test-ahead" for t in threading.enumerate())
    ahead.close()  # a second close is harmless
    assert list(ahead) == []


def test_depth_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        Ahead(iter([1]), depth=0)
