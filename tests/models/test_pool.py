"""Endpoint pools: sticky by clip, least outstanding, per-endpoint limits, failover, health."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from gaze.errors import GazeInputError
from gaze.models.pool import Endpoint, EndpointPool, clip_affinity, parse_endpoints
from gaze.models.protocol import (
    Message,
    ModelCallError,
    ModelReply,
    ModelRequest,
    TransientModelError,
)
from gaze.models.throttle import START


class Server:
    """A backbone that takes ``latency`` per request and counts what it carries."""

    provider = "openai"
    model = "m"
    native_json_schema = True

    def __init__(self, name: str, latency: float = 0.01, slots: int = 0) -> None:
        self.name = name
        self.latency = latency
        self.slots = slots
        """Requests it serves at once; the rest are refused 429 (0: no limit)."""
        self.refused = 0
        self.down = False
        self.rejects = False
        self.in_flight = 0
        self.most_in_flight = 0
        self.served: list[str] = []

    async def complete(self, request: ModelRequest) -> ModelReply:
        if self.down:
            raise TransientModelError(f"cannot reach {self.name}")
        if self.rejects:
            raise ModelCallError("400: bad request")
        if self.slots and self.in_flight >= self.slots:
            self.refused += 1
            raise TransientModelError("429: too many requests", rate_limited=True)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        self.served.append(clip_affinity.get())
        return ModelReply(text="{}")


def pool_of(*servers: Server, limit: int = 0, **options) -> EndpointPool:
    return EndpointPool([Endpoint(s, s.name, limit) for s in servers], **options)


def request(n: int = 0) -> ModelRequest:
    return ModelRequest(role="observer", messages=(Message.text("user", f"{n}"),), schema_name="A")


async def clip_requests(pool: EndpointPool, clip: str, count: int) -> None:
    clip_affinity.set(clip)
    await asyncio.gather(*(pool.complete(request(n)) for n in range(count)))


def test_each_clip_sticks_to_one_endpoint_and_clips_spread_over_all():
    servers = [Server(f"s{i}") for i in range(3)]
    pool = pool_of(*servers)

    async def main():
        clips = [f"clip{i:02d}" for i in range(12)]
        # one clip at a time: stickiness is not disturbed by load
        for clip in clips:
            await asyncio.create_task(clip_requests(pool, clip, 3))

    asyncio.run(main())
    for server in servers:
        assert server.served, "every endpoint gets clips"
    homes = {
        clip: {s.name for s in servers if clip in s.served}
        for clip in set().union(*(s.served for s in servers))
    }
    assert all(len(home) == 1 for home in homes.values())  # sticky by clip


def test_a_busy_endpoint_spills_to_the_least_busy_and_limits_hold():
    servers = [Server(f"s{i}", latency=0.05) for i in range(2)]
    pool = pool_of(*servers, limit=4)

    async def main():
        await clip_requests(pool, "one-clip", 24)  # one clip, far more than one server's share

    asyncio.run(main())
    assert all(s.most_in_flight <= 4 for s in servers)  # per-endpoint limit
    assert all(len(s.served) >= 8 for s in servers)  # spilled over


def test_an_endpoint_that_refuses_gets_no_more_than_it_held_and_the_others_take_the_rest():
    """One clip's requests all prefer one endpoint (sticky, within the slack of 16): a server
    that takes 2 at once refuses the rest, and from then on is sent at most what it held."""
    small, large = Server("small", latency=0.05, slots=2), Server("large", latency=0.05)
    pool = pool_of(small, large)
    clip = next(f"clip{n}" for n in range(100) if pool_prefers(pool, f"clip{n}") == "small")

    async def main():
        for _ in range(3):  # rounds of 8 requests of one clip
            await clip_requests(pool, clip, 8)

    asyncio.run(main())
    assert small.most_in_flight == 2 and len(small.served) >= 6 and len(large.served) >= 6
    assert small.refused <= 6  # the first round's burst; then the pool keeps to what it held
    assert pool.endpoints[0].learned.limit < 3


class QueueingServer(Server):
    """Serves ``slots`` at once and queues the rest, reporting its queue as vLLM does."""

    def __init__(self, name: str, latency: float, slots: int) -> None:
        super().__init__(name, latency)
        self.queue_slots = asyncio.Semaphore(slots)
        self.waiting = 0
        self.most_waiting = 0

    async def queue_waiting(self) -> int | None:
        return self.waiting

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.waiting += 1
        self.most_waiting = max(self.most_waiting, self.waiting)
        async with self.queue_slots:
            self.waiting -= 1
            return await super().complete(request)


def test_an_endpoint_that_reports_a_queue_gets_what_it_serves_and_the_others_the_rest():
    queueing, other = QueueingServer("queueing", 0.05, slots=2), Server("other", latency=0.05)
    pool = pool_of(queueing, other)
    clip = next(f"clip{n}" for n in range(100) if pool_prefers(pool, f"clip{n}") == "queueing")

    async def main():
        for _ in range(4):  # rounds of 12 requests of one clip (within the sticky slack)
            await clip_requests(pool, clip, 12)

    asyncio.run(main())
    assert pool.endpoints[0].learned.limit < 4  # it serves 2: one more may wait
    assert len(other.served) >= 24  # the rest went to the other endpoint
    assert len(queueing.served) + len(other.served) == 48


def test_an_endpoint_that_reports_its_queue_opens_with_slow_start_not_the_whole_burst():
    """A clip's 24 requests at once, all preferring one 4-slot endpoint: unbounded before its
    first reply, it took 20 and queued 16; it opens with slow start's 8 instead, the other
    takes 8, and the rest wait for room or for a read of an empty queue."""
    first, second = QueueingServer("a", 0.3, slots=4), QueueingServer("b", 0.3, slots=4)
    pool = pool_of(first, second)
    clip = next(f"clip{n}" for n in range(100) if pool_prefers(pool, f"clip{n}") == "a")
    assert all(e.learned.limit == START for e in pool.endpoints)
    asyncio.run(clip_requests(pool, clip, 24))
    assert first.most_waiting <= START - 4 and second.most_waiting <= START - 4
    assert len(first.served) + len(second.served) == 24


def test_a_fleet_reports_its_least_queue_and_none_where_one_endpoint_does_not():
    """The caller's throttle reads a pool as one server: it takes more while one endpoint has
    no queue (slow start), and three servers of 4 slots, one of them queueing, were not held to
    fewer requests than they serve (the sum of the queues did that: 0.64 of their slots busy)."""
    first, second = QueueingServer("a", 0.05, slots=1), QueueingServer("b", 0.05, slots=1)
    first.waiting, second.waiting = 3, 4
    assert asyncio.run(pool_of(first, second).queue_waiting()) == 3
    second.waiting = 0
    assert asyncio.run(pool_of(first, second).queue_waiting()) == 0
    assert asyncio.run(pool_of(first, Server("silent")).queue_waiting()) is None


def pool_prefers(pool: EndpointPool, clip: str) -> str:
    clip_affinity.set(clip)
    return pool.preference(request())[0].name


def test_failover_sends_the_same_request_on_and_a_dead_endpoint_is_taken_out():
    alive, dead = Server("alive"), Server("dead")
    dead.down = True
    now = [0.0]
    pool = pool_of(alive, dead, down_after=2, clock=lambda: now[0])

    async def main():
        for n in range(10):
            clip_affinity.set(f"clip{n}")
            await pool.complete(request(n))

    asyncio.run(main())
    assert len(alive.served) == 10  # no request failed
    stats = pool.stats()
    assert stats["dead"]["failed"] == 2 and stats["dead"]["marked_down"] == 1
    assert stats["dead"]["requests"] == 2  # down: no more requests during its cooldown


def test_a_down_endpoint_is_tried_again_after_its_cooldown_and_comes_back():
    first, second = Server("first"), Server("second")
    second.down = True
    now = [0.0]
    pool = pool_of(first, second, down_after=1, clock=lambda: now[0])

    async def spread(count: int) -> None:
        for n in range(count):
            clip_affinity.set(f"clip{n}")
            await pool.complete(request(n))

    asyncio.run(spread(6))
    assert pool.stats()["second"]["marked_down"] == 1
    second.down = False
    now[0] = 4.0  # still cooling down
    asyncio.run(spread(6))
    assert second.served == []
    now[0] = 6.0  # cooldown over: one request tests it, and it is back
    asyncio.run(spread(12))
    assert len(second.served) >= 2


def test_every_endpoint_failing_is_the_callers_transient_error():
    a, b = Server("a"), Server("b")
    a.down = b.down = True
    pool = pool_of(a, b)
    with pytest.raises(TransientModelError, match="cannot reach"):
        asyncio.run(pool.complete(request()))


def test_a_rejected_request_is_not_sent_elsewhere():
    a, b = Server("a"), Server("b")
    a.rejects = b.rejects = True
    pool = pool_of(a, b)
    with pytest.raises(ModelCallError):
        asyncio.run(pool.complete(request()))
    assert sum(s["requests"] for s in pool.stats().values()) == 1


def test_endpoints_come_from_urls_or_a_pool_file(tmp_path):
    assert parse_endpoints("http://a:1/v1 http://b:2/v1", 3) == [
        ("http://a:1/v1", 3),
        ("http://b:2/v1", 3),
    ]
    pool_file = tmp_path / "pool.json"
    pool_file.write_text(
        '{"endpoints": [{"base_url": "http://a:1/v1", "concurrency": 8}, '
        '{"base_url": "http://b:2/v1"}]}'
    )
    assert parse_endpoints(f"@{pool_file}", 2) == [("http://a:1/v1", 8), ("http://b:2/v1", 2)]
    pool_file.write_text('{"endpoints": [{"url": "http://a:1/v1"}]}')
    with pytest.raises(GazeInputError, match="endpoint 0: needs a base_url"):
        parse_endpoints(f"@{pool_file}")
    with pytest.raises(GazeInputError, match="pool file"):
        parse_endpoints(f"@{tmp_path / 'missing.json'}")


def test_without_a_clip_the_first_image_decides():
    from gaze.models.protocol import ImagePart

    servers = [Server(f"s{i}") for i in range(4)]
    pool = pool_of(*servers)
    image = ImagePart(b"frame-bytes")
    with_image = ModelRequest(role="critic", messages=(Message("user", (image,)),), schema_name="A")
    orders = {tuple(e.name for e in pool.preference(with_image)) for _ in range(5)}
    assert len(orders) == 1
    assert Counter(e.name for e in pool.preference(request())) == Counter(s.name for s in servers)


def test_without_limits_a_clip_spills_only_past_the_sticky_slack():
    from gaze.models.pool import STICKY_SLACK

    servers = [Server(f"s{i}", latency=0.05) for i in range(2)]
    pool = pool_of(*servers)
    asyncio.run(clip_requests(pool, "one-clip", STICKY_SLACK))
    assert sorted(len(s.served) for s in servers) == [0, STICKY_SLACK]  # all on its home
    for server in servers:
        server.served.clear()
    asyncio.run(clip_requests(pool, "one-clip", 3 * STICKY_SLACK))
    assert min(len(s.served) for s in servers) >= STICKY_SLACK // 2  # spilled under load


def test_several_urls_bind_a_pool_and_each_url_is_checked():
    from gaze.models.registry import bind_roles

    bound = bind_roles(
        "openai:m",
        {"critic": "openai:m,base_url=http://a:1/v1,base_url=http://b:2/v1"},
        "http://c:3/v1 http://d:4/v1",
        endpoint_concurrency=8,
    )
    critic, default = bound.backbones["critic"], bound.backbones["default"]
    assert isinstance(critic, EndpointPool) and isinstance(default, EndpointPool)
    assert [e.name for e in critic.endpoints] == ["http://a:1/v1", "http://b:2/v1"]
    assert [e.limit for e in default.endpoints] == [8, 8]
    assert bound.endpoints["critic"] == "http://a:1/v1 http://b:2/v1"  # the cache's endpoint
    with pytest.raises(GazeInputError, match="Port out of range"):
        bind_roles("openai:m", {}, "http://c:3/v1 http://d:99999/v1")
    with pytest.raises(GazeInputError, match="openai or gemini"):
        bind_roles("scripted:auto", {}, "http://c:3/v1 http://d:4/v1")


def test_a_fleet_and_its_endpoints_read_each_server_once_for_both():
    """The pool's throttle and each endpoint's own watch ask at the same moments (replies):
    a read under way serves both instead of one read per asker."""

    class Counted(QueueingServer):
        reads = 0

        async def queue_waiting(self) -> int | None:
            self.reads += 1
            await asyncio.sleep(0.01)  # a page on its way over HTTP
            return self.waiting

    first, second = Counted("a", 0.05, slots=1), Counted("b", 0.05, slots=1)
    first.waiting, second.waiting = 3, 4
    pool = pool_of(first, second)
    own = [e.queue for e in pool.endpoints]
    assert all(own)

    async def main() -> list[int | None]:
        return list(await asyncio.gather(pool.queue_waiting(), own[0](), own[1]()))

    assert asyncio.run(main()) == [3, 3, 4]
    assert (first.reads, second.reads) == (1, 1)
