"""Back-pressure per backbone: a 429 means "slow down", not "this server is down".

A server that takes so many requests at once (a hosted API's concurrency limit, a gateway in
front of vLLM) answers the rest 429, often with a Retry-After. Treating those as failures either
trips the circuit breaker or burns every call's retries in lock-step. Instead the backbone's
in-flight limit adapts to what the server takes, and keeps it full without flooding it:

- a 429 comes back at once, while the requests the server took are still being served: the
  limit falls to the number of this backbone's requests still in flight (at least 1), so a
  burst of refusals leaves it at what the server held. A refusal of a request sent under an
  earlier, higher limit finds no more in flight than the limit and changes nothing;
- a 429 that finds nothing else of this backbone in flight was not about how many requests
  were sent at once (a rate or token quota): its Retry-After holds every new request to that
  backbone until it has passed (capped by the caller's longest pause). The refused request
  itself always waits its Retry-After before it is sent again (``gaze.models.caller``);
- the limit starts at ``START`` and, until the server refuses a request, each success adds 1
  (it doubles every round of replies, up to the caller's concurrency: TCP's slow start), so a
  run of many clips does not open with a burst of refusals; once the server has refused one,
  each success adds 1/limit/``PATIENCE``: one more request every ``PATIENCE`` rounds, so a
  server kept full sees about one refusal per ``PATIENCE`` rounds (a probe of whether it takes
  one more).

A server that queues what is past its slots instead of refusing it (vLLM past
``max_num_seqs``) gives no 429 to learn from: it would hold up to the caller's whole
concurrency in its queue. Where it reports its queue (vLLM's ``/metrics``,
``vllm:num_requests_waiting``), ``QueueWatch`` reads it after replies (after each one while
slow start can still double the limit: below the caller's concurrency, with all of it taken;
else at most every ``WATCH_S``: a fleet that refuses, not queues, had its empty queue read
1.7-1.9 times per request served, 0.4-0.5 since), and a queue found lowers
the limit to what the server serves at once plus a margin of one in ``QUEUE_SHARE`` of that
(so no slot waits for the next request to arrive); it then climbs as after a 429, one request
per ``PATIENCE`` rounds. Such a server also paces slow start itself: while requests wait for
room under the limit, the queue is read every ``WATCH_S``, and an empty queue with the limit
reached doubles it at once. Slow start by rounds of replies took a round per doubling: with
requests of 8 s, a 64-slot server waited three rounds (24 s) to be full; read from its queue,
a doubling takes 0.5 s.

The start-up check's probes go out beside the run's first requests without waiting for room,
but count as in flight while the server serves them (``Counted``): a 4-slot server holding two
probes and two requests refuses the rest, and the limit must fall to the four it held, not the
two of them that were the run's (three such servers were held to 0.77 of their slots busy).
A pool's probes count at their endpoint and in the caller's throttle over the pool
(``gaze.models.pool.probes_also_count``): counted at the endpoints alone, a request that all three
4-slot servers refused beside their six probes lowered the pool's limit to the run's 7, below
the fleet's 12 slots, for the rest of the run.

A pool of endpoints keeps the same rules per endpoint as well (``gaze.models.pool``): a server
of the fleet that refuses or queues gets no more than it serves, and the others take the rest.

Other transient errors (5xx, timeouts, resets) leave the limit alone: they are retried with
backoff, and the circuit breaker (``gaze.models.caller``) decides when an endpoint is down.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gaze.models.protocol import Backbone, ModelReply, ModelRequest

START = 8
"""Requests in flight before any reply has come back (the first rounds double it)."""
PATIENCE = 8
"""Rounds of successes per request the limit gains once the server has refused one."""
WATCH_S = 0.5
"""Least time between two reads of a queueing server's waiting requests."""
QUEUE_SHARE = 4
"""A queueing server is kept one request in this many of those it serves ahead (at least 1).
One in 8 left a 16-slot server's slots idle while the client decoded clips on 2 cores (a
reply's next request came late, after the margin of 2 had been served)."""

QueueReader = Callable[[], Awaitable[int | None]]
"""Reads the requests waiting in a server's queue; None: the server does not say."""


class Limit:
    """The rule alone, without waiting: how many requests may be in flight, and how that
    changes with each success and refusal (``Throttle`` waits on one per backbone; a pool keeps
    one per endpoint, ``gaze.models.pool``)."""

    def __init__(self, ceiling: float, start: float) -> None:
        self.ceiling = max(1.0, ceiling)
        self.limit = max(1.0, min(self.ceiling, start))
        """Requests that may be in flight now (its integer part counts)."""
        self.refused = False
        """Whether the server has refused a request (the limit then climbs more slowly)."""
        self.slowdowns = 0
        """Times a 429 lowered the limit (the run manifest can report it)."""

    def room(self, in_flight: int) -> bool:
        return in_flight < max(1, int(self.limit))

    def succeeded(self) -> None:
        step = 1.0 / max(self.limit, 1.0) / PATIENCE if self.refused else 1.0
        self.limit = min(self.ceiling, self.limit + step)

    def refused_with(self, held: int) -> None:
        """A 429 came back while ``held`` other requests were still being served."""
        self.refused = True
        if held < int(self.limit):
            self.limit = float(max(1, held))
            self.slowdowns += 1

    def unqueued(self, in_flight: int) -> None:
        """The server's queue is empty while ``in_flight`` of ours are out: it serves them all
        at once. In slow start, with the limit reached, it doubles (a server that has queued
        or refused one is not asked for more this way)."""
        if not self.refused and in_flight >= int(self.limit):
            self.limit = min(self.ceiling, 2.0 * max(self.limit, in_flight))

    def queued(self, waiting: int, in_flight: int) -> None:
        """The server holds ``waiting`` requests in its queue while ``in_flight`` of ours are
        out: it serves the rest at once; keep at most a margin queued beyond them."""
        if waiting <= 0:
            return
        self.refused = True
        serving = max(1, in_flight - waiting)
        target = serving + max(1, serving // QUEUE_SHARE)
        if target < int(self.limit):
            self.limit = float(target)
            self.slowdowns += 1


class SharedReading:
    """One server's queue as several watches read it: a pool's throttle reads the fleet
    (``EndpointPool.queue_waiting``) while each endpoint's own watch reads its server, both
    after the same replies. A read under way is joined instead of started again: three
    queueing servers of 16 slots had their ``/metrics`` read 0.40 times per request served,
    now 0.26 (``bench/fleet_throughput.py``). A finished read is not kept for the next asker:
    a queue read 0.1-0.25 s earlier, set against the requests in flight now, lowered 4-slot
    servers' limits below what they serve (0.98 -> 0.86-0.93 of their slots busy). A read that
    failed fails its askers alike."""

    def __init__(self, read: QueueReader) -> None:
        self._read = read
        self._reading: asyncio.Task[int | None] | None = None
        self.reads = 0
        """Reads of the server itself (tests count them)."""

    async def __call__(self) -> int | None:
        loop = asyncio.get_running_loop()
        job = self._reading
        if job is None or job.get_loop() is not loop or job.done():
            self.reads += 1
            job = self._reading = loop.create_task(self._fresh())
            job.add_done_callback(lambda j: j.cancelled() or j.exception())  # askers all gone
        return await asyncio.shield(job)  # one asker cancelled never cancels the others'

    async def _fresh(self) -> int | None:
        return await self._read()


class QueueWatch:
    """A queueing server's own count of waiting requests, read after replies (one read at a
    time; at most every ``WATCH_S`` once the limit has been lowered, after every reply before,
    while slow start doubles it), lowering a ``Limit``; off for good once the server turns out
    not to report it."""

    def __init__(self, read: QueueReader, clock: Callable[[], float] = time.monotonic) -> None:
        self._read = read
        self._clock = clock
        self._last = -WATCH_S
        self._reading: asyncio.Task[None] | None = None
        self.off = False

    def after_reply(self, limit: Limit, in_flight: Callable[[], int]) -> None:
        # in slow start the limit doubles each round: read at every reply until a queue shows,
        # while the limit binds (a reply's room taken again at once) and is below the ceiling:
        # else an empty queue has nothing to raise
        doubling = (
            not limit.refused
            and limit.limit < limit.ceiling
            and in_flight() + 1 >= int(limit.limit)
        )
        self._read_after(0.0 if doubling else WATCH_S, limit, in_flight)

    def while_waiting(self, limit: Limit, in_flight: Callable[[], int]) -> None:
        """Requests wait for room under the limit: in slow start, read at most every
        ``WATCH_S`` whether the server has room for more (``Limit.unqueued``)."""
        if not limit.refused and limit.limit < limit.ceiling:
            self._read_after(WATCH_S, limit, in_flight)

    def _read_after(self, pause: float, limit: Limit, in_flight: Callable[[], int]) -> None:
        now = self._clock()
        loop = asyncio.get_running_loop()
        job = self._reading
        busy = job is not None and job.get_loop() is loop and not job.done()
        if self.off or busy or now - self._last < pause or in_flight() < 1:
            return  # (with nothing else out, nothing of ours can be queued)
        self._last = now
        self._reading = loop.create_task(self._apply(limit, in_flight))

    async def settle(self) -> None:
        """Let a read still under way end (a client closed under it warns of a coroutine
        never awaited)."""
        job = self._reading
        if job is not None and job.get_loop() is asyncio.get_running_loop():
            await asyncio.wait({job})

    async def _apply(self, limit: Limit, in_flight: Callable[[], int]) -> None:
        try:
            waiting = await self._read()
        except Exception:  # a read that failed says nothing: the next reply reads again
            return
        if waiting is None:
            self.off = True
        elif waiting > 0:
            limit.queued(waiting, in_flight())
        else:
            limit.unqueued(in_flight())


class Throttle(Limit):
    """The adaptive in-flight limit of one backbone (see the module docstring)."""

    def __init__(
        self,
        ceiling: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        queue: QueueReader | None = None,
    ) -> None:
        super().__init__(ceiling, START)
        self.watch = None if queue is None else QueueWatch(queue, clock)
        self.in_flight = 0
        self.resume_at = 0.0
        """No new request before this time (a Retry-After)."""
        self._clock = clock
        self._changed = asyncio.Condition()

    async def acquire(self) -> None:
        """Wait for room under the limit (and past any Retry-After)."""
        async with self._changed:
            while True:
                wait = self.resume_at - self._clock()
                if wait <= 0 and self.room(self.in_flight):
                    self.in_flight += 1
                    return
                timeout = wait if wait > 0 else None
                if wait <= 0 and self.watch is not None and not self.watch.off:
                    # no room: a server that reports its queue says whether it takes more
                    self.watch.while_waiting(self, lambda: self.in_flight)
                    timeout = None if self.refused else WATCH_S
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=timeout)

    @contextlib.asynccontextmanager
    async def beside(self) -> AsyncIterator[None]:
        """A request sent without waiting for room (a start-up check's probe), counted in
        flight while the server serves it."""
        self.in_flight += 1
        try:
            yield
        finally:
            async with self._changed:
                self.in_flight -= 1
                self._changed.notify_all()

    async def release(self, *, ok: bool, rate_limited: bool, retry_after: float | None) -> None:
        """A request ended: adapt the limit to how it ended."""
        async with self._changed:
            self.in_flight -= 1
            if ok:
                self.succeeded()
                if self.watch is not None:
                    self.watch.after_reply(self, lambda: self.in_flight)
            elif rate_limited:
                self.refused_with(self.in_flight)
                if self.in_flight == 0 and retry_after is not None and retry_after > 0:
                    self.resume_at = max(self.resume_at, self._clock() + retry_after)
            self._changed.notify_all()


class Counted:
    """A backbone whose requests count as in flight on a ledger (``Throttle.beside``,
    ``EndpointPool.beside``) without waiting for room: the start-up check's probes, sent beside
    the run's first requests, are among the requests a server held when it refuses one."""

    def __init__(
        self, backbone: Backbone, hold: Callable[[], AbstractAsyncContextManager[None]]
    ) -> None:
        self.backbone = backbone
        self.provider = backbone.provider
        self.model = backbone.model
        self.native_json_schema = backbone.native_json_schema
        self._hold = hold

    def __getattr__(self, name: str) -> Any:  # base_url, context_length, image_detail...
        return getattr(self.backbone, name)

    async def complete(self, request: ModelRequest) -> ModelReply:
        async with self._hold():
            return await self.backbone.complete(request)
