"""The back-pressure rule (``gaze.models.throttle``) on its own, with a fake clock."""

from __future__ import annotations

import asyncio

from gaze.models.throttle import Throttle


def test_a_burst_of_429s_halves_the_limit_once_per_round():
    async def go() -> Throttle:
        throttle = Throttle(16)
        rounds = [await throttle.acquire() for _ in range(16)]
        for sent_in in rounds:  # sixteen 429s of requests sent under the same limit
            await throttle.release(sent_in, ok=False, rate_limited=True, retry_after=None)
        return throttle

    throttle = asyncio.run(go())
    assert throttle.limit == 8 and throttle.slowdowns == 1 and throttle.in_flight == 0


def test_successes_climb_back_by_about_one_per_round_up_to_the_ceiling():
    async def go() -> list[float]:
        throttle = Throttle(4)
        throttle.limit = 1.0
        seen = []
        for _ in range(12):
            sent_in = await throttle.acquire()
            await throttle.release(sent_in, ok=True, rate_limited=False, retry_after=None)
            seen.append(throttle.limit)
        return seen

    seen = asyncio.run(go())
    assert seen[0] == 2.0 and seen[-1] == 4.0 and max(seen) == 4.0


def test_other_failures_leave_the_limit_alone():
    async def go() -> Throttle:
        throttle = Throttle(8)
        sent_in = await throttle.acquire()
        await throttle.release(sent_in, ok=False, rate_limited=False, retry_after=None)
        return throttle

    assert asyncio.run(go()).limit == 8


def test_a_retry_after_holds_new_requests_until_it_has_passed():
    now = [100.0]

    async def go() -> list[str]:
        throttle = Throttle(4, clock=lambda: now[0])
        sent_in = await throttle.acquire()
        await throttle.release(sent_in, ok=False, rate_limited=True, retry_after=0.2)
        order = []

        async def request() -> None:
            await throttle.acquire()
            order.append("sent")

        waiting = asyncio.ensure_future(request())
        await asyncio.sleep(0.05)
        order.append("still held")
        now[0] += 0.2  # the clock passes the Retry-After; the waiter's own timer wakes it
        await asyncio.wait_for(waiting, timeout=2)
        return order

    assert asyncio.run(go()) == ["still held", "sent"]


def test_the_limit_bounds_requests_in_flight():
    async def go() -> int:
        throttle = Throttle(3)
        in_flight = most = 0

        async def request() -> None:
            nonlocal in_flight, most
            sent_in = await throttle.acquire()
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            await throttle.release(sent_in, ok=True, rate_limited=False, retry_after=None)

        await asyncio.gather(*(request() for _ in range(12)))
        return most

    assert asyncio.run(go()) == 3
