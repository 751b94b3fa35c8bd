"""Back-pressure per backbone: a 429 means "slow down", not "this server is down".

A hosted API under load answers a burst of parallel requests with 429s (often with a
Retry-After). Treating those as failures either trips the circuit breaker or burns every call's
retries in lock-step. Instead the backbone's in-flight limit adapts, as TCP's congestion window
does (additive increase, multiplicative decrease):

- a 429 halves the limit (at least 1), once per *round*: the requests already in flight when the
  limit fell were sent under the old limit, so their 429s say nothing new and do not halve it
  again;
- a 429 with a Retry-After holds every new request to that backbone until it has passed
  (capped by the caller's longest pause);
- each success adds 1/limit, so the limit climbs back by about one per round of successes, up
  to the caller's concurrency.

Other transient errors (5xx, timeouts, resets) leave the limit alone: they are retried with
backoff, and the circuit breaker (``gaze.models.caller``) decides when an endpoint is down.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable


class Throttle:
    """The adaptive in-flight limit of one backbone (see the module docstring)."""

    def __init__(self, ceiling: int, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = float(self.ceiling)
        """Requests this backbone may have in flight now (its integer part counts)."""
        self.in_flight = 0
        self.round = 0
        """Raised each time the limit falls; a request remembers the round it was sent in."""
        self.resume_at = 0.0
        """No new request before this time (a Retry-After)."""
        self.slowdowns = 0
        """Times a 429 lowered the limit (the run manifest can report it)."""
        self._clock = clock
        self._changed = asyncio.Condition()

    async def acquire(self) -> int:
        """Wait for room under the limit (and past any Retry-After); the round sent in."""
        async with self._changed:
            while True:
                wait = self.resume_at - self._clock()
                if wait <= 0 and self.in_flight < max(1, int(self.limit)):
                    self.in_flight += 1
                    return self.round
                timeout = wait if wait > 0 else None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), timeout=timeout)

    async def release(
        self, sent_in: int, *, ok: bool, rate_limited: bool, retry_after: float | None
    ) -> None:
        """A request sent in round ``sent_in`` ended: adapt the limit to how it ended."""
        async with self._changed:
            self.in_flight -= 1
            if ok:
                self.limit = min(float(self.ceiling), self.limit + 1.0 / max(self.limit, 1.0))
            elif rate_limited:
                if sent_in == self.round:
                    self.limit = max(1.0, self.limit / 2)
                    self.round += 1
                    self.slowdowns += 1
                if retry_after is not None and retry_after > 0:
                    self.resume_at = max(self.resume_at, self._clock() + retry_after)
            self._changed.notify_all()
