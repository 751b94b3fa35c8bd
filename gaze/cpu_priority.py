"""Work that gives way to the critical path when every core is busy.

Some of a run's work is needed a call later than the work beside it: LangGraph's import (the
graph's first node runs after the grounding reply) and the pixel signals (the router reads
them, after the observers). On a 2-core machine they took CPU from decoding, whose windows the
observers wait for: a 60 s clip's last observer request left 0.2 s later
(``bench/graph_latency.py``). Linux keeps a nice value per thread, so such work runs in a thread
of its own at a lower priority; with a core free it runs as fast as before.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import os
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

MAX_NICENESS = 19


def this_thread_niceness() -> int:
    """The calling thread's nice value (Linux, where each thread has its own)."""
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def lower_this_thread(niceness: int) -> None:
    """Raise the calling thread's nice value by ``niceness`` (at most to 19). Only Linux keeps
    one per thread (elsewhere ``setpriority`` names processes, so nothing is done). Without
    privileges it cannot be undone: call it only in a thread that ends with its work."""
    if sys.platform != "linux" or niceness <= 0:
        return
    try:
        lowered = min(MAX_NICENESS, this_thread_niceness() + niceness)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), lowered)
    except OSError:  # a sandbox that refuses it: the work runs at the usual priority
        pass


async def in_lower_thread(work: Callable[[], T], *, name: str, niceness: int) -> T:
    """``work()`` in a new thread at ``niceness`` below the caller's priority, awaited like
    ``asyncio.to_thread`` (with the caller's context variables). The thread ends with the work:
    an executor's thread would keep the lower priority for whatever it runs next."""
    done: concurrent.futures.Future[T] = concurrent.futures.Future()
    context = contextvars.copy_context()

    def run() -> None:
        lower_this_thread(niceness)
        if not done.set_running_or_notify_cancel():  # cancelled before it began
            return
        try:
            done.set_result(context.run(work))
        except BaseException as exc:  # handed to the awaiting task
            done.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    import asyncio  # here: a decoding child lowers its threads and has no event loop

    return await asyncio.wrap_future(done)
