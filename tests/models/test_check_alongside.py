"""The start-up check runs alongside a backbone's first requests: as many go out at once as
the backbone's throttle lets out (slow start's first round), later ones wait for the check, and
no reply is used before the backbone has passed it."""

from __future__ import annotations

import asyncio

import pytest

from gaze.models.caller import Caller
from gaze.models.protocol import (
    FewerImagesServed,
    ImagePart,
    Message,
    ModelConfigError,
    ModelReply,
    ModelRequest,
    TextPart,
    TransientModelError,
)
from gaze.models.scripted import ScriptedBackbone
from gaze.models.throttle import START


def request(n: int) -> ModelRequest:
    return ModelRequest(
        role="observer",
        messages=(Message.text("user", f"call {n}"),),
        schema_name="Answer",
        json_schema={"type": "object"},
    )


def run_calls(check_result: Exception | None, calls: int = START + 4):
    sent_during_check: list[str] = []
    # replies take longer than the check: only slow start's first round goes out during it
    backbone = ScriptedBackbone(lambda r: {"ok": True}, model="m", latency_s=0.4)

    async def check(backbone, where):
        await asyncio.sleep(0.2)
        sent_during_check.extend(r.messages[0].parts[0].text for r in backbone.requests)
        if check_result is not None:
            raise check_result

    async def main():
        caller = Caller({"default": backbone}, check=check)
        jobs = [caller.send(request(n), caller.new_record(request(n))) for n in range(calls)]
        return await asyncio.gather(*jobs, return_exceptions=True)

    return asyncio.run(main()), sent_during_check, backbone


def test_the_first_requests_go_out_while_the_check_runs_the_rest_wait():
    results, during, backbone = run_calls(None)
    assert all(not isinstance(r, Exception) for r in results)
    assert len(during) == START == 8
    assert len(backbone.requests) == START + 4


def test_a_failed_check_wins_over_replies_that_came_back():
    problem = ModelConfigError("the server refuses 32 images in one prompt")
    results, during, backbone = run_calls(problem)
    assert all(isinstance(r, ModelConfigError) for r in results)  # no reply used
    assert len(backbone.requests) == START  # the others were never sent


def test_a_passed_check_is_not_repeated():
    calls = []

    async def check(backbone, where):
        calls.append(where)

    async def main():
        caller = Caller({"default": ScriptedBackbone(lambda r: {}, model="m")}, check=check)
        for n in range(3):
            await caller.send(request(n), caller.new_record(request(n)))

    asyncio.run(main())
    assert calls == ["scripted:m (observer)"]


def image_request(images: int) -> ModelRequest:
    jpeg = b"\xff\xd8" + bytes(images) + b"\xff\xd9"
    parts = (*(ImagePart(jpeg) for _ in range(images)), TextPart("look"))
    return ModelRequest(
        role="observer",
        messages=(Message("user", parts),),
        schema_name="Answer",
        json_schema={"type": "object"},
    )


def test_a_server_that_takes_fewer_images_still_gets_requests_that_fit():
    async def check(backbone, where):
        raise FewerImagesServed("the server refuses 64 images in one prompt", images=33)

    backbone = ScriptedBackbone(lambda r: {"ok": True}, model="m")

    async def main():
        caller = Caller({"default": backbone}, check=check)
        fits = await caller.send(image_request(33), caller.new_record(image_request(33)))
        with pytest.raises(FewerImagesServed, match="refuses 64 images"):
            await caller.send(image_request(34), caller.new_record(image_request(34)))
        return fits, await caller.images_served(["observer", "critic"], check=False)

    reply, served = asyncio.run(main())
    assert reply.text and served == 33
    assert [r.images for r in backbone.requests] == [33]  # the 34-image request never went


def test_what_a_server_takes_is_remembered_in_the_cache_for_a_rerun(tmp_path):
    from gaze.models.cache import ResponseCache

    checks = []

    async def check(backbone, where):
        checks.append(where)
        raise FewerImagesServed("refuses 64", images=33)

    def served(run_checks: bool):
        async def main():
            caller = Caller(
                {"default": ScriptedBackbone(lambda r: {}, model="m")},
                cache=ResponseCache(tmp_path),
                check=check,
            )
            return await caller.images_served(["observer"], check=run_checks)

        return asyncio.run(main())

    assert served(False) is None and checks == []  # nothing known, nothing asked
    assert served(True) == 33 and len(checks) == 1
    assert served(False) == 33 and len(checks) == 1  # from the cache: no server needed


class FourSlots:
    """A server that serves 4 requests at once and refuses the rest with 429."""

    provider = "openai"
    model = "m"
    native_json_schema = True

    def __init__(self) -> None:
        self.in_flight = 0

    async def complete(self, request: ModelRequest) -> ModelReply:
        if self.in_flight >= 4:
            raise TransientModelError("429: too many requests", rate_limited=True)
        self.in_flight += 1
        try:  # long beside the 0.05 s the later requests wait: a loaded machine keeps the order
            await asyncio.sleep(1.0)
        finally:
            self.in_flight -= 1
        return ModelReply(text='{"ok": true}')


async def probe_twice(backbone, where) -> None:
    """A start-up check's two probes, at once."""
    await asyncio.gather(backbone.complete(request(-1)), backbone.complete(request(-2)))


def test_the_checks_probes_count_among_what_a_refusing_server_held():
    """The first request starts the check; its two probes and three more requests fill the
    server's 4 slots and the rest are refused. The limit falls to the 4 the server held, not to
    the 2 of them that were the run's (three such servers were held to 0.77 of their slots)."""
    server = FourSlots()

    async def main():
        caller = Caller({"default": server}, check=probe_twice)

        async def call(n: int, after: float):
            await asyncio.sleep(after)
            return await caller.send(request(n), caller.new_record(request(n)))

        results = await asyncio.gather(
            *(call(n, 0.0 if n == 0 else 0.05) for n in range(START)), return_exceptions=True
        )
        return results, caller.throttle(server)

    results, throttle = asyncio.run(main())
    refused = [r for r in results if isinstance(r, TransientModelError)]
    assert len(refused) == START - 4  # the probes took room: 6 of the run's went, 2 served
    assert 4 <= throttle.limit < 5 and throttle.in_flight == 0


def test_a_pools_probes_count_among_what_each_endpoint_held():
    from gaze.models.pool import Endpoint, EndpointPool, check_pool

    server = FourSlots()
    pool = EndpointPool([Endpoint(server, "a", 0)])

    async def main():
        check = asyncio.ensure_future(check_pool(pool, "w", probe_twice))
        await asyncio.sleep(0.05)
        results = await asyncio.gather(
            *(pool.complete(request(n)) for n in range(6)), return_exceptions=True
        )
        await check
        return results

    results = asyncio.run(main())
    # two served beside the probes, the third refused; the rest waited for room under 4
    assert sum(isinstance(r, TransientModelError) for r in results) == 1
    assert 4 <= pool.endpoints[0].learned.limit < 5 and pool.endpoints[0].outstanding == 0


def test_a_pools_probes_count_in_the_callers_throttle_over_the_pool():
    """The caller's throttle over a pool counts the check's probes at every endpoint as in
    flight while they are served, as it does a lone backbone's: counted at the endpoints alone,
    three refusing 4-slot servers held six probes and the run's first requests, a request all
    three refused lowered this limit to the run's 7, and the fleet's 12 slots ran 0.66 full."""
    from gaze.models.pool import Endpoint, EndpointPool, check_pool

    pool = EndpointPool([Endpoint(FourSlots(), name, 0) for name in "abc"])
    seen: list[int] = []

    async def check(backbone, where):
        await check_pool(backbone, where, probe_twice)

    async def main():
        caller = Caller({"default": pool}, check=check)
        first = asyncio.ensure_future(caller.send(request(0), caller.new_record(request(0))))
        await asyncio.sleep(0.1)  # the probes are with the servers (0.2 s each)
        throttle = caller.throttle(pool)
        seen.append(throttle.in_flight)
        await first
        return throttle

    throttle = asyncio.run(main())
    assert seen == [1 + 3 * 2]  # the run's first request and two probes at each endpoint
    assert throttle.in_flight == 0 and all(e.outstanding == 0 for e in pool.endpoints)
