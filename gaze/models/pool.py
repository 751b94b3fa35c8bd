"""Several endpoints serving one model, used as one backbone.

A lab serves its model from a fleet of vLLM servers; gaze spreads one run's requests over them:

- **Sticky by clip.** Every request of a clip prefers the same endpoint (rendezvous hashing on
  the clip's id, or on the request's first image when no clip is named), so the frames a clip's
  calls share stay in one server's prefix cache.
- **Least outstanding.** The preferred endpoint is used while it carries no more than
  ``STICKY_SLACK`` requests above the least busy one; past that the least busy one is used.
- **Per-endpoint limits.** An endpoint never carries more than its own concurrency limit, nor
  more than it held when it last answered 429 (``gaze.models.throttle.Limit``: it then climbs
  back slowly), so a server of the fleet that refuses sends its work to the others.
- **Health and failover.** A transport failure sends the same request on to the next endpoint
  at once (a 429 too, but a 429 never counts against an endpoint's health: it is alive).
  After ``down_after`` failures in a row an endpoint is down: it gets no requests for a
  cooldown (5 s, doubling to 60 s), then one request tests it again (half-open) and a success
  brings it back. When every endpoint is resting, the one back soonest is tried at once. Only
  when every endpoint has failed a request does the caller see the error (its backoff and retry
  budget apply then).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gaze.models.protocol import (
    Backbone,
    EndpointUnreachableError,
    FewerImagesServed,
    ModelReply,
    ModelRequest,
    TransientModelError,
)
from gaze.models.throttle import START, WATCH_S, Counted, Limit, QueueWatch, SharedReading

log = logging.getLogger("gaze.pool")

clip_affinity: contextvars.ContextVar[str] = contextvars.ContextVar("gaze_clip", default="")
"""The clip a task works on (set by ``gaze.diagnose`` and ``bench run``); pools route by it."""

Hold = Callable[[], contextlib.AbstractAsyncContextManager[None]]
probes_also_count: contextvars.ContextVar[Hold | None] = contextvars.ContextVar(
    "gaze_probes_also_count", default=None
)
"""Where else the start-up check's probes count as in flight, beside their endpoint: the
caller's throttle over the pool (``Throttle.beside``), set in the task that checks it."""

STICKY_SLACK = 16
"""Requests the preferred endpoint may carry above the least busy one before work spills (a
vLLM server batches this many easily; a per-endpoint limit caps it harder)."""

UNKNOWN = float(1 << 30)
"""An endpoint's learned limit before its first 429: no bound."""
COOLDOWN_S = 5.0
MAX_COOLDOWN_S = 60.0


@dataclass
class Endpoint:
    """One member of a pool and what the pool knows of it."""

    backbone: Backbone
    name: str
    """The endpoint's public URL (no credentials): logs, stats and routing."""
    limit: int = 0
    """Most requests in flight at this endpoint (0: no limit of its own)."""
    learned: Limit = field(default_factory=lambda: Limit(UNKNOWN, UNKNOWN))
    """What the endpoint takes, learned from its 429s (no bound until its first)."""
    outstanding: int = 0
    failures_in_a_row: int = 0
    down_until: float = 0.0
    cooldown_s: float = COOLDOWN_S
    stats: dict[str, int] = field(
        default_factory=lambda: {"requests": 0, "failed": 0, "marked_down": 0}
    )

    watch: QueueWatch | None = None
    """Reads the endpoint's queue where it reports one (``gaze.models.throttle``)."""
    queue: SharedReading | None = None
    """The endpoint's queue as its watch and the pool's throttle both read it (one read)."""

    def __post_init__(self) -> None:
        read = getattr(self.backbone, "queue_waiting", None)
        if self.queue is None and read is not None:
            self.queue = SharedReading(read)
        if self.watch is None and self.queue is not None:
            self.watch = QueueWatch(self.queue)
        if self.watch is not None and self.learned.limit >= UNKNOWN:
            # a server that reports its queue starts as a backbone does (slow start, doubled
            # while its queue stays empty): unbounded, the first clips' requests all went to
            # their preferred endpoint before its first reply, and a 4-slot server held a
            # queue of 20 well into the run
            self.learned = Limit(UNKNOWN, START)

    def in_flight(self) -> int:
        """Requests out at this endpoint now (what its queue watch sets a queue against)."""
        return self.outstanding

    def has_room(self) -> bool:
        mine = self.limit <= 0 or self.outstanding < self.limit
        return mine and self.learned.room(self.outstanding)

    def usable(self, now: float) -> bool:
        """Up, or down with its cooldown over (one request may test it)."""
        return self.down_until <= now


class EndpointPool:
    """A backbone made of several endpoints of one model (see the module docstring)."""

    def __init__(
        self, endpoints: Sequence[Endpoint], *, down_after: int = 2, clock: Any = time.monotonic
    ) -> None:
        if not endpoints:
            raise ValueError("a pool needs at least one endpoint")
        first = endpoints[0].backbone
        self.provider = first.provider
        self.model = first.model
        self.native_json_schema = first.native_json_schema
        self.image_detail: str = getattr(first, "image_detail", "auto")
        self.base_url: str | None = getattr(first, "base_url", None)
        self.endpoints = list(endpoints)
        self.down_after = max(1, down_after)
        self._clock = clock
        self._condition: tuple[asyncio.AbstractEventLoop, asyncio.Condition] | None = None

    @property
    def _changed(self) -> asyncio.Condition:
        """Notified when room frees; made for the loop in use (a pool may outlive a loop)."""
        loop = asyncio.get_running_loop()
        if self._condition is None or self._condition[0] is not loop:
            self._condition = (loop, asyncio.Condition())
        return self._condition[1]

    async def queue_waiting(self) -> int | None:
        """The queue of the fleet's least queued endpoint, where every endpoint reports its own;
        None when one does not. The caller's throttle reads a pool as one server: while one
        endpoint's queue is empty the fleet takes more (it paces slow start), and a queue at
        every endpoint lowers the pool's limit no further than what the fleet serves (each
        endpoint's own limit keeps its queue short, ``Endpoint.watch``)."""
        reads = [e.queue for e in self.endpoints if e.queue is not None]
        if len(reads) < len(self.endpoints):
            return None
        found = await asyncio.gather(*(read() for read in reads))
        return None if any(n is None for n in found) else min(n for n in found if n is not None)

    def beside(self, endpoint: Endpoint) -> Hold:
        """Requests to ``endpoint`` sent without waiting for room (its start-up check's probes),
        counted among its outstanding ones while it serves them (``gaze.models.throttle``), and
        wherever ``probes_also_count`` says in the task that asks."""

        also = probes_also_count.get()

        @contextlib.asynccontextmanager
        async def held() -> AsyncIterator[None]:
            async with contextlib.AsyncExitStack() as stack:
                if also is not None:
                    await stack.enter_async_context(also())
                endpoint.outstanding += 1
                try:
                    yield
                finally:
                    async with self._changed:
                        endpoint.outstanding -= 1
                        self._changed.notify_all()

        return held

    def preference(self, request: ModelRequest) -> list[Endpoint]:
        """The endpoints in this request's order of preference (rendezvous hashing)."""
        key = clip_affinity.get() or _first_image(request)
        if not key:
            return list(self.endpoints)

        def score(endpoint: Endpoint) -> bytes:
            return hashlib.sha256(f"{key}\0{endpoint.name}".encode()).digest()

        return sorted(self.endpoints, key=score, reverse=True)

    def _choose(self, order: list[Endpoint], tried: set[int]) -> Endpoint | None:
        now = self._clock()
        untried = [e for e in order if id(e) not in tried]
        candidates = [e for e in untried if e.usable(now)]
        if not candidates and untried:
            # Every endpoint left is resting: the one back soonest is tried now (half-open), so
            # a pool with nowhere else to go behaves as one endpoint, paced by the caller's
            # backoff, instead of failing each request without sending it.
            candidates = [min(untried, key=lambda e: e.down_until)]
        with_room = [e for e in candidates if e.has_room()]
        if not with_room:
            return None
        least = min(e.outstanding for e in with_room)
        # the first in preference order within the slack (the least busy one always is)
        return next(e for e in with_room if e.outstanding <= least + STICKY_SLACK)

    def _any_up(self) -> bool:
        now = self._clock()
        return any(e.usable(now) for e in self.endpoints)

    async def _acquire(self, order: list[Endpoint], tried: set[int]) -> Endpoint | None:
        """The endpoint to send to (waiting for room), or None when none is left to try."""
        async with self._changed:
            while True:
                chosen = self._choose(order, tried)
                if chosen is not None:
                    chosen.outstanding += 1
                    chosen.stats["requests"] += 1
                    return chosen
                if len(tried) >= len(self.endpoints):
                    return None
                # room frees when a request ends, or when an endpoint in slow start reports an
                # empty queue (read at most every WATCH_S while requests wait)
                for endpoint in self.endpoints:
                    if endpoint.watch is not None and not endpoint.has_room():
                        endpoint.watch.while_waiting(endpoint.learned, endpoint.in_flight)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=WATCH_S)

    async def _release(self, endpoint: Endpoint, error: BaseException | None) -> None:
        async with self._changed:
            endpoint.outstanding -= 1
            if error is None:
                endpoint.learned.succeeded()
                if endpoint.watch is not None:
                    endpoint.watch.after_reply(endpoint.learned, endpoint.in_flight)
                if endpoint.failures_in_a_row >= self.down_after:
                    log.warning("endpoint %s is back", endpoint.name)
                endpoint.failures_in_a_row = 0
                endpoint.down_until = 0.0
                endpoint.cooldown_s = COOLDOWN_S
            elif isinstance(error, TransientModelError):
                endpoint.stats["failed"] += 1
                # a 429 is an endpoint alive and busy (it takes no more than it held, and the
                # caller's throttle slows down): its health counts only the other failures
                if error.rate_limited:
                    endpoint.learned.refused_with(endpoint.outstanding)
                else:
                    endpoint.failures_in_a_row += 1
                    if endpoint.failures_in_a_row >= self.down_after:
                        self._mark_down(endpoint, str(error))
            self._changed.notify_all()

    def _mark_down(self, endpoint: Endpoint, reason: str) -> None:
        endpoint.down_until = self._clock() + endpoint.cooldown_s
        endpoint.stats["marked_down"] += 1
        if self._any_up():  # when none is left, the caller's error says it all
            log.warning(
                "endpoint %s is down for %.0f s (%s); its work goes to the others",
                endpoint.name,
                endpoint.cooldown_s,
                reason,
            )
        endpoint.cooldown_s = min(MAX_COOLDOWN_S, endpoint.cooldown_s * 2)

    def mark_down(self, backbone: Backbone, reason: str) -> None:
        """Take an endpoint out of rotation (the start-up check found it unreachable)."""
        for endpoint in self.endpoints:
            if endpoint.backbone is backbone:
                endpoint.failures_in_a_row = self.down_after
                self._mark_down(endpoint, reason)

    async def complete(self, request: ModelRequest) -> ModelReply:
        order = self.preference(request)
        tried: set[int] = set()
        last: TransientModelError | None = None
        while True:
            endpoint = await self._acquire(order, tried)
            if endpoint is None:
                raise last or TransientModelError(f"every endpoint of {self.model} is down")
            tried.add(id(endpoint))
            try:
                reply = await endpoint.backbone.complete(request)
            except TransientModelError as exc:
                await self._release(endpoint, exc)
                last = exc  # failover: the same request goes to the next endpoint at once
                continue
            except BaseException as exc:
                await self._release(endpoint, exc)
                raise
            await self._release(endpoint, None)
            return reply

    def stats(self) -> dict[str, dict[str, int]]:
        """Requests, failed requests and times marked down, per endpoint."""
        return {e.name: dict(e.stats) for e in self.endpoints}


def _first_image(request: ModelRequest) -> str:
    for message in request.messages:
        for part in message.parts:
            sha = getattr(part, "sha256", "")
            if sha:
                return str(sha)
    return ""


def parse_endpoints(text: str, default_limit: int = 0) -> list[tuple[str, int]]:
    """(URL, concurrency limit) of each endpoint a base-URL setting names: one URL, several
    separated by spaces, or ``@FILE`` -- a JSON pool file
    ``{"endpoints": [{"base_url": URL, "concurrency": N}, ...]}`` (``concurrency`` optional)."""
    from gaze.errors import GazeInputError

    text = text.strip()
    if not text.startswith("@"):
        return [(url, default_limit) for url in text.split()]
    path = text[1:]
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as exc:
        raise GazeInputError(f"pool file {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise GazeInputError(f"pool file {path} is not JSON ({exc})") from None
    rows = data.get("endpoints") if isinstance(data, dict) else None
    if not isinstance(rows, list) or not rows:
        raise GazeInputError(f'pool file {path} needs {{"endpoints": [{{"base_url": URL}}, ...]}}')
    out = []
    for n, row in enumerate(rows):
        url = row.get("base_url") if isinstance(row, dict) else None
        limit = row.get("concurrency", default_limit) if isinstance(row, dict) else None
        if not isinstance(url, str) or not isinstance(limit, int) or limit < 0:
            raise GazeInputError(
                f"pool file {path}, endpoint {n}: needs a base_url string and an optional "
                "concurrency >= 0"
            )
        out.append((url, limit))
    return out


async def check_pool(
    pool: EndpointPool, where: str, check: Callable[[Backbone, str], Awaitable[None]]
) -> None:
    """The start-up check of every endpoint at once. An endpoint that cannot be reached is
    taken out of rotation (the run goes on with the others); an endpoint that answers but
    cannot do the work (a key refused, too few images per prompt) fails the run in one line,
    as would every endpoint being unreachable."""
    jobs = [
        check(Counted(e.backbone, pool.beside(e)), f"{where} at {e.name}") for e in pool.endpoints
    ]
    results = await asyncio.gather(*jobs, return_exceptions=True)
    unreachable: list[EndpointUnreachableError] = []
    fewer: list[FewerImagesServed] = []  # the pool takes what its smallest endpoint takes
    for endpoint, result in zip(pool.endpoints, results, strict=True):
        if isinstance(result, EndpointUnreachableError):
            unreachable.append(result)
            pool.mark_down(endpoint.backbone, str(result))
        elif isinstance(result, FewerImagesServed):
            fewer.append(result)
        elif isinstance(result, BaseException):
            raise result
    if len(unreachable) == len(pool.endpoints):
        raise unreachable[0]
    if fewer:
        raise min(fewer, key=lambda e: e.images)
