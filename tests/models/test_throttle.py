"""The back-pressure rule (``gaze.models.throttle``) on its own, with a fake clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from gaze.models.throttle import PATIENCE, Limit, QueueWatch, SharedReading, Throttle


def release(throttle: Throttle, *, ok: bool = True, refused: bool = False, after=None):
    return throttle.release(ok=ok, rate_limited=refused, retry_after=after)


def test_a_burst_of_429s_leaves_the_limit_at_what_the_server_held():
    """Sixteen sent at once to a server that takes 4: the 12 refusals come back while the 4 are
    served, and the limit ends at 4 (halving once per round left it at 8, and a server of 4
    slots then refused 4 of every 8 sent)."""

    async def go() -> Throttle:
        throttle = Throttle(16)
        throttle.limit = 16.0
        for _ in range(16):
            await throttle.acquire()
        for _ in range(12):
            await release(throttle, ok=False, refused=True)
        assert throttle.limit == 4 and throttle.resume_at == 0  # others in flight: no hold
        for _ in range(4):
            await release(throttle)
        return throttle

    throttle = asyncio.run(go())
    assert 4 < throttle.limit < 4.2 and throttle.in_flight == 0


def test_a_refusal_of_a_request_sent_under_a_higher_limit_changes_nothing():
    async def go() -> Throttle:
        throttle = Throttle(4)
        for _ in range(4):
            await throttle.acquire()
        throttle.limit = 2.0  # lowered by a refusal while 4 were in flight
        await release(throttle, ok=False, refused=True)  # 3 still in flight, above 2
        return throttle

    throttle = asyncio.run(go())
    assert throttle.limit == 2 and throttle.slowdowns == 0


def test_successes_double_the_limit_each_round_until_a_refusal_then_add_one_per_8_rounds():
    async def go(refused: bool) -> list[float]:
        throttle = Throttle(64)
        throttle.refused = refused
        seen = [throttle.limit]
        for _ in range(6):  # rounds: as many requests as the limit, then their replies
            count = int(throttle.limit)
            for _ in range(count):
                await throttle.acquire()
            for _ in range(count):
                await release(throttle)
            seen.append(throttle.limit)
        return seen

    assert asyncio.run(go(False)) == [8, 16, 32, 64, 64, 64, 64]
    patient = asyncio.run(go(True))
    assert patient[0] == 8 and 8.1 < patient[1] < 8.2 and 8.6 < patient[-1] < 8.8


def test_other_failures_leave_the_limit_alone():
    async def go() -> Throttle:
        throttle = Throttle(8)
        await throttle.acquire()
        await release(throttle, ok=False)
        return throttle

    assert asyncio.run(go()).limit == 8


def test_a_retry_after_holds_new_requests_until_it_has_passed():
    now = [100.0]

    async def go() -> list[str]:
        throttle = Throttle(4, clock=lambda: now[0])
        await throttle.acquire()  # the only request in flight is refused: a quota, not slots
        await release(throttle, ok=False, refused=True, after=0.2)
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
            await throttle.acquire()
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(0.01)
            in_flight -= 1
            await release(throttle)

        await asyncio.gather(*(request() for _ in range(12)))
        return most

    assert asyncio.run(go()) == 3


def test_a_queue_the_server_reports_lowers_the_limit_to_what_it_serves_plus_a_margin():
    limit = Limit(256, 64)
    limit.queued(waiting=0, in_flight=40)  # no queue: nothing learned
    assert limit.limit == 64 and not limit.refused
    limit.queued(waiting=24, in_flight=40)  # it serves 16 at once: keep 4 (one in 4) queued
    assert limit.limit == 20 and limit.refused and limit.slowdowns == 1
    limit.queued(waiting=30, in_flight=31)
    assert limit.limit == 2  # it serves 1: one more waits
    limit.succeeded()
    assert limit.limit == 2 + 1 / 2 / PATIENCE  # then it climbs as after a 429


def reads_after_replies(
    limit: Limit,
    times: tuple[float, ...],
    in_flight: Callable[[], int],
    answers: list[int | None],
    *,
    waiting: bool = False,
) -> tuple[list[float], QueueWatch]:
    """The clock times of the queue reads a watch makes over ``limit`` after a reply at each of
    ``times`` (and, ``waiting``, while requests then wait for room), and the watch; the server
    answers ``answers`` in turn, the last one from then on."""
    now = [0.0]
    reads: list[float] = []

    async def read() -> int | None:
        reads.append(now[0])
        return answers.pop(0) if len(answers) > 1 else answers[0]

    async def replies() -> QueueWatch:
        watch = QueueWatch(read, clock=lambda: now[0])
        for t in times:
            now[0] = t
            watch.after_reply(limit, in_flight)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            if waiting:
                watch.while_waiting(limit, in_flight)
                await asyncio.sleep(0)
        return watch

    return reads, asyncio.run(replies())


def test_the_queue_is_read_at_most_every_half_second_and_never_again_where_unreported():
    limit = Limit(64, 64)
    times = (0.0, 0.1, 0.2, 0.6, 0.7, 1.5, 3.0)
    reads, watch = reads_after_replies(limit, times, lambda: 21, [5, None])
    assert watch.off
    assert reads == [0.0, 0.6]  # then the server said it does not report a queue
    assert limit.limit == 16 + 4  # 21 out, 5 waiting: it serves 16


def test_at_its_ceiling_slow_start_reads_the_queue_no_more_than_every_half_second():
    """A fleet that refuses rather than queues shows an empty queue at every read: slow start
    reads after every reply only while an empty queue can still double the limit (three
    4-slot servers had /metrics read 1.9 times per request served, then 0.5)."""
    limit = Limit(16, 4)
    times = (0.0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.7)
    reads, _ = reads_after_replies(limit, times, lambda: int(limit.limit), [0], waiting=True)
    assert limit.limit == 16 and not limit.refused  # 4, 8, 16: then nothing left to double
    assert reads == [0.0, 0.1, 0.6]  # doubled twice, then at most every half second


def test_slow_start_reads_after_every_reply_only_while_the_limit_binds():
    """Three requests out under a limit of 16: the server has all the room they need and an
    empty queue raises nothing, so the queue is read at most every half second."""
    limit = Limit(256, 16)
    reads, _ = reads_after_replies(limit, (0.0, 0.1, 0.2, 0.6, 0.7), lambda: 3, [0])
    assert reads == [0.0, 0.6] and limit.limit == 16


def test_an_empty_queue_doubles_the_limit_in_slow_start_and_nothing_else_does():
    limit = Limit(256, 8)
    limit.unqueued(in_flight=5)  # the limit not reached: nothing learned
    assert limit.limit == 8
    limit.unqueued(in_flight=8)
    assert limit.limit == 16
    limit.queued(waiting=4, in_flight=16)  # a queue at last: it serves 12
    assert limit.limit == 15 and limit.refused
    limit.unqueued(in_flight=15)  # past slow start an empty queue raises nothing
    assert limit.limit == 15


def test_a_server_that_reports_its_queue_fills_its_slots_without_waiting_for_replies():
    """Requests of 8 s at a 12-slot server: slow start by rounds of replies would send 8, then
    16 after 8 s. Read from the server's queue while requests wait, the limit doubles until a
    queue shows, then settles at what the server serves plus a margin; no reply is needed."""
    reads: list[int] = []
    slots = 12

    async def go() -> tuple[Throttle, int]:
        throttle = Throttle(64, queue=lambda: waiting())

        async def waiting() -> int:
            queued = max(0, throttle.in_flight - slots)
            reads.append(queued)
            return queued

        async def request() -> None:
            await throttle.acquire()  # and never released: every request is still being served

        waiters = [asyncio.ensure_future(request()) for _ in range(40)]
        await asyncio.sleep(1.3)
        sent = throttle.in_flight
        for waiter in waiters:
            waiter.cancel()
        await asyncio.gather(*waiters, return_exceptions=True)
        return throttle, sent

    throttle, sent = asyncio.run(go())
    assert sent == 16  # 8, then 16 once the empty queue was read; the next read found 4 queued
    assert throttle.limit == slots + 3 and throttle.refused
    assert reads[:2] == [0, 4] and len(reads) <= 4  # read at most every half second


def test_a_shared_reading_is_joined_while_under_way_and_not_kept_after():
    answers: list[int | Exception] = [RuntimeError("a busy server's 500"), 2, 5]

    async def read() -> int | None:
        await asyncio.sleep(0.01)  # a page on its way over HTTP
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    reading = SharedReading(read)

    async def main() -> list[int | None]:
        with pytest.raises(RuntimeError):  # the asker meets the failure
            await reading()
        together = await asyncio.gather(reading(), reading())  # one read for both
        return [*together, await reading()]  # a finished read is not kept: read again

    assert asyncio.run(main()) == [2, 2, 5]
    assert reading.reads == 3
