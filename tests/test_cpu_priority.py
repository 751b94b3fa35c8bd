"""Work that gives way to the critical path: a thread of its own at a lower priority, awaited
like ``asyncio.to_thread``, that leaves every other thread's priority as it was."""

from __future__ import annotations

import asyncio
import contextvars
import sys
import threading

import pytest

from gaze.cpu_priority import in_lower_thread, lower_this_thread, this_thread_niceness

LINUX_ONLY = pytest.mark.skipif(
    sys.platform != "linux", reason="only Linux keeps a priority per thread"
)
who = contextvars.ContextVar("who", default="nobody")


@LINUX_ONLY
def test_the_work_runs_lower_and_the_threads_after_it_do_not():
    async def run() -> tuple[int, int, int, str, str]:
        who.set("the caller")
        own = this_thread_niceness()
        lowered, name, seen = await in_lower_thread(
            lambda: (this_thread_niceness(), threading.current_thread().name, who.get()),
            name="gaze-test-low",
            niceness=5,
        )
        after = await asyncio.to_thread(this_thread_niceness)  # an executor: never lowered
        return own, lowered, after, name, seen

    own, lowered, after, name, seen = asyncio.run(run())
    assert lowered == min(19, own + 5) and after == own == this_thread_niceness()
    assert name == "gaze-test-low" and seen == "the caller"


def test_the_works_error_reaches_the_awaiting_task():
    def fail() -> None:
        raise KeyError("no graph")

    with pytest.raises(KeyError, match="no graph"):
        asyncio.run(in_lower_thread(fail, name="gaze-test-fail", niceness=5))


def test_a_cancelled_wait_leaves_the_work_to_end_on_its_own():
    release = threading.Event()
    ended = threading.Event()

    def work() -> int:
        release.wait(5)
        ended.set()
        return 1

    async def run() -> None:
        task = asyncio.ensure_future(in_lower_thread(work, name="gaze-test-cancel", niceness=1))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        await asyncio.to_thread(ended.wait, 5)
        await asyncio.sleep(0.05)  # its result arrives at a settled future: nothing is raised

    asyncio.run(run())
    assert ended.is_set()


@LINUX_ONLY
def test_lowering_stops_at_the_least_priority_and_ignores_no_change():
    seen: list[int] = []

    def twice() -> None:
        lower_this_thread(15)
        lower_this_thread(15)
        seen.append(this_thread_niceness())
        lower_this_thread(0)
        seen.append(this_thread_niceness())

    thread = threading.Thread(target=twice)
    thread.start()
    thread.join()
    assert seen == [19, 19]
