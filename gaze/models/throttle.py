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

A pool of endpoints keeps the same rule per endpoint as well (``gaze.models.pool``): a server
of the fleet that refuses gets no more than it held, and the others take the rest.

Other transient errors (5xx, timeouts, resets) leave the limit alone: they are retried with
backoff, and the circuit breaker (``gaze.models.caller``) decides when an endpoint is down.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

START = 8
"""Requests in flight before any reply has come back (the first rounds double it)."""
PATIENCE = 8
"""Rounds of successes per request the limit gains once the server has refused one."""


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


class Throttle(Limit):
    """The adaptive in-flight limit of one backbone (see the module docstring)."""

    def __init__(self, ceiling: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(ceiling, START)
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
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=timeout)

    async def release(self, *, ok: bool, rate_limited: bool, retry_after: float | None) -> None:
        """A request ended: adapt the limit to how it ended."""
        async with self._changed:
            self.in_flight -= 1
            if ok:
                self.succeeded()
            elif rate_limited:
                self.refused_with(self.in_flight)
                if self.in_flight == 0 and retry_after is not None and retry_after > 0:
                    self.resume_at = max(self.resume_at, self._clock() + retry_after)
            self._changed.notify_all()
