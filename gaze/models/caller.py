"""Every backbone request goes through here: the response cache, bounded concurrency, a lazy
start-up check per backbone, the backoff pause after a transient error, and a record of every
HTTP attempt for the run manifest (failed attempts included).

The retry loop itself lives in ``gaze.models.structured.ask``: one budget per call, shared by
transport errors and unparseable replies.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import TypedDict

from gaze.models import defaults
from gaze.models.cache import ResponseCache, cache_key, finding_key
from gaze.models.prices import Pricing
from gaze.models.protocol import (
    Backbone,
    EndpointDownError,
    FewerImagesServed,
    ModelReply,
    ModelRequest,
    TransientModelError,
)
from gaze.models.throttle import Counted, Throttle
from gaze.models.tokens import estimate_input_tokens, rule_for


class CallRecord(TypedDict):
    """One request (or cache hit) as the run manifest counts it."""

    role: str
    model: str
    input_tokens: int
    output_tokens: int
    images: int
    latency_s: float
    cache_hit: bool
    attempts: int
    ok: bool
    estimated_input_tokens: int
    """Input tokens by the provider's published image-token rule (``gaze.models.tokens``)."""
    cached_input_tokens: int
    """Input tokens the server reported answering from its prompt cache."""
    """False for an attempt that got no usable reply (transport error, refusal, bad output)."""


@dataclass(frozen=True)
class RetryPolicy:
    """Pauses between attempts after a transient error (timeouts, 429, 5xx, resets)."""

    initial_s: float = defaults.RETRY_INITIAL_S
    max_s: float = defaults.RETRY_MAX_S
    """Longest pause, a server's Retry-After included (a larger one is capped to this)."""

    def pause(self, attempt: int, error: Exception | None, rng: random.Random) -> float:
        """Exponential backoff with full jitter; a server's Retry-After wins when it gives one."""
        if isinstance(error, TransientModelError) and error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.max_s)
        ceiling = min(self.max_s, self.initial_s * 2 ** max(0, attempt - 1))
        return rng.uniform(ceiling / 2, ceiling)


SEND_GRACE_S = 0.1
"""Time the SDK gets to put a run's first requests on the wire once the first is handed to its
backbone (building them, the start-up check's beside them, takes tens of milliseconds of the
interpreter). Work that would compete with that waits for ``first_requests_out``."""

Check = Callable[[Backbone, str], Any]
"""The start-up check of a backbone: an awaitable that raises ModelConfigError when unusable."""


@dataclass
class _OnLoop:
    """What a caller holds for the one event loop it is used on."""

    loop: asyncio.AbstractEventLoop
    semaphore: asyncio.Semaphore
    """The run's limit on requests in flight."""
    first_requests_out: asyncio.Event
    """Set SEND_GRACE_S after the first request was handed to a backbone."""
    checked: dict[int, asyncio.Future[None]] = field(default_factory=dict)
    """Each backbone's start-up check, started once."""
    throttles: dict[int, Throttle] = field(default_factory=dict)
    handing_over: asyncio.TimerHandle | None = None
    """Sets ``first_requests_out``; scheduled when the first request is handed over."""


class Caller:
    """Binds roles to backbones and makes their requests reliably and countably."""

    def __init__(
        self,
        bindings: Mapping[str, Backbone],
        *,
        endpoints: Mapping[str, str] | None = None,
        cache: ResponseCache | None = None,
        concurrency: int = defaults.CONCURRENCY,
        retry: RetryPolicy | None = None,
        temperature: float = defaults.TEMPERATURE,
        pricing: Pricing | None = None,
        check: Check | None = None,
        checked_for: str = "",
        request_timeout_s: float = defaults.REQUEST_TIMEOUT_S,
        breaker_after: int = defaults.BREAKER_AFTER,
        max_reply_chars: int = defaults.MAX_REPLY_CHARS,
        seed: int = 0,
    ) -> None:
        self.bindings = dict(bindings)
        self.endpoints = dict(endpoints or {})
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.temperature = temperature
        self.pricing = pricing or Pricing({})
        """What the run's calls cost (``gaze.models.prices``)."""
        self._check = check
        self._checked_for = checked_for
        """What the check asks of a server (the images and their size): a finding remembered
        in the cache answers only the same question."""
        self._on: _OnLoop | None = None
        self._rng = random.Random(seed)
        self.request_timeout_s = request_timeout_s
        """Total deadline of one request, first byte to last (not an idle timeout)."""
        self.breaker_after = breaker_after
        """Calls of one backbone in a row that got no reply after all their retries, with no
        success in between, after which it gets no more work. Failed attempts do not count: a
        burst of parallel first attempts meeting a rate limit or a restart is not an endpoint
        that is down."""
        self._calls_failed_in_a_row: dict[int, int] = {}
        self._concurrency = max(1, concurrency)
        self.max_reply_chars = max_reply_chars
        """Longer replies are refused unread: not parsed, not fed back, not cached."""

    def _here(self) -> _OnLoop:
        """This loop's limits, checks and throttles, made on first use in it (asyncio objects
        belong to one loop: a caller reused by a later ``asyncio.run`` starts them afresh)."""
        loop = asyncio.get_running_loop()
        if self._on is None or self._on.loop is not loop:
            self._on = _OnLoop(loop, asyncio.Semaphore(self._concurrency), asyncio.Event())
        return self._on

    @property
    def first_requests_out(self) -> asyncio.Event:
        """Set once the first requests are on the wire: SEND_GRACE_S after one was first handed
        to a backbone. The price data loads then, and ``gaze.api`` loads the graph module: both
        imports, started at the hand-over, competed with building the first requests (the price
        data's delayed a 60 s clip's first request by 0.06 s)."""
        return self._here().first_requests_out

    def _first_requests_sent(self, here: _OnLoop) -> None:
        here.first_requests_out.set()
        self.pricing.preload(self.model_name(role) for role in self.bindings)

    async def __aenter__(self) -> Caller:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def backbone(self, role: str) -> Backbone:
        try:
            return self.bindings[role]
        except KeyError:
            return self.bindings["default"]

    def model_name(self, role: str) -> str:
        backbone = self.backbone(role)
        return f"{backbone.provider}:{backbone.model}"

    def _endpoint(self, role: str) -> str:
        return self.endpoints.get(role, self.endpoints.get("default", ""))

    def key(self, request: ModelRequest) -> str:
        backbone = self.backbone(request.role)
        endpoint = self._endpoint(request.role)
        detail = getattr(backbone, "image_detail", "auto")
        if detail != "auto":  # the same messages at another detail are another request
            endpoint += f"#detail={detail}"
        return cache_key(backbone.provider, backbone.model, endpoint, request)

    def new_record(self, request: ModelRequest) -> CallRecord:
        """The record of a request about to be sent, with its estimated input tokens."""
        backbone = self.backbone(request.role)
        detail = getattr(backbone, "image_detail", "auto")
        return self._record(request, estimate_input_tokens(request, rule_for(backbone), detail))

    def _record(self, request: ModelRequest, estimated_input_tokens: int) -> CallRecord:
        return CallRecord(
            role=request.role,
            model=self.model_name(request.role),
            input_tokens=0,
            output_tokens=0,
            images=request.frames,
            latency_s=0.0,
            cache_hit=False,
            attempts=1,
            ok=True,
            estimated_input_tokens=estimated_input_tokens,
            cached_input_tokens=0,
        )

    async def cached(self, request: ModelRequest) -> tuple[ModelReply, CallRecord] | None:
        """The validated reply stored for this request, if any (no request is sent)."""
        if self.cache is None:
            return None
        reply = await self.cache.aget(self.key(request))
        if reply is None:
            return None
        record = self._record(request, 0)  # nothing is sent: no tokens to estimate
        record["cache_hit"] = True
        record["images"] = 0
        record["attempts"] = 0
        return reply, record

    async def remember(self, request: ModelRequest, reply: ModelReply) -> None:
        """Store a reply that validated (only those: a bad reply must not stick)."""
        if self.cache is not None and reply.refusal is None:
            await self.cache.aput(self.key(request), reply)

    def _check_job(self, backbone: Backbone, role: str) -> asyncio.Future[None] | None:
        """The start-up check of a backbone, started once, before its first real request (a
        rerun answered wholly from the cache never needs the server)."""
        if self._check is None:
            return None
        checked = self._here().checked
        job = checked.get(id(backbone))
        if job is None:
            job = asyncio.ensure_future(self._checked(backbone, role))
            checked[id(backbone)] = job
        return job

    async def _checked(self, backbone: Backbone, role: str) -> None:
        """The check, its finding on images per request remembered in the cache."""
        assert self._check is not None
        from gaze.models.pool import (  # (a pool counts each endpoint's probes)
            EndpointPool,
            probes_also_count,
        )

        target: Backbone = backbone
        if isinstance(backbone, EndpointPool):
            # the probes count at their endpoint and in this throttle over the pool: counted at
            # the endpoints alone, three refusing 4-slot servers held six probes and the run's
            # first requests, a request all three refused lowered this limit to the run's 7,
            # and the fleet's 12 slots ran 0.66 full for the rest of the run
            probes_also_count.set(self.throttle(backbone).beside)  # (this task's context)
        else:  # the probes count as what it serves
            target = Counted(backbone, self.throttle(backbone).beside)
        try:
            await self._check(target, f"{backbone.provider}:{backbone.model} ({role})")
        except FewerImagesServed as exc:
            await self._remember_images(role, str(exc.images))
            raise
        await self._remember_images(role, "")  # a server restarted with a higher limit

    def _images_key(self, role: str) -> str:
        backbone = self.backbone(role)
        finding = f"images {self._checked_for}".rstrip()
        return finding_key(backbone.provider, backbone.model, self._endpoint(role), finding)

    async def _remember_images(self, role: str, most: str) -> None:
        if self.cache is not None:
            await self.cache.aput(self._images_key(role), ModelReply(most, 0, 0))

    @property
    def checks_started(self) -> bool:
        """Whether a start-up check has begun in this loop (a request went to a server)."""
        return bool(self._here().checked)

    async def images_served(self, roles: Iterable[str], *, check: bool) -> int | None:
        """The fewest images per request the roles' backbones take, where a start-up check
        found fewer than gaze's largest request; None where none did, or none could tell. From
        this loop's finished checks, else from what the cache remembers of an earlier run (a
        rerun answered from the cache needs no server), else, with ``check``, from the checks
        run now."""
        found: list[int] = []
        for role in dict.fromkeys(roles):
            job = self._here().checked.get(id(self.backbone(role)))
            if job is None and self.cache is not None:
                remembered = await self.cache.aget(self._images_key(role))
                if remembered is not None:  # "" when the server took what it was asked
                    found += [int(remembered.text)] if remembered.text.isdigit() else []
                    continue
            if job is None and check:
                job = self._check_job(self.backbone(role), role)
            if job is not None:
                with contextlib.suppress(Exception):  # another error: a request will meet it
                    await asyncio.shield(job)
                error = job.exception() if job.done() and not job.cancelled() else None
                found += [error.images] if isinstance(error, FewerImagesServed) else []
        return min(found, default=None)

    def throttle(self, backbone: Backbone) -> Throttle:
        """The backbone's adaptive in-flight limit (``gaze.models.throttle``)."""
        throttles = self._here().throttles
        throttle = throttles.get(id(backbone))
        if throttle is None:
            queue = getattr(backbone, "queue_waiting", None)  # a server that reports its queue
            throttle = throttles[id(backbone)] = Throttle(self._concurrency, queue=queue)
        return throttle

    def _breaker(self, backbone: Backbone) -> None:
        failures = self._calls_failed_in_a_row.get(id(backbone), 0)
        if self.breaker_after and failures >= self.breaker_after:
            raise EndpointDownError(
                f"{backbone.provider}:{backbone.model}: {failures} calls in a row got no reply "
                "after their retries; this run sends it no more work"
            )

    def no_reply(self, role: str) -> None:
        """A call of ``role`` spent its whole budget without a reply (the breaker counts it)."""
        key = id(self.backbone(role))
        self._calls_failed_in_a_row[key] = self._calls_failed_in_a_row.get(key, 0) + 1

    async def send(self, request: ModelRequest, record: CallRecord) -> ModelReply:
        """One request to the role's backbone (no cache, no retry), within the total deadline
        ``request_timeout_s``; ``record`` is filled in whether it succeeds or raises.

        The backbone's start-up check runs alongside its first requests: as many go out while
        it runs as the backbone's throttle lets out (slow start opens with ``throttle.START``;
        failures do not raise it), so a misconfigured endpoint gets a few before the check's
        one line, and a run of many clips keeps a server busy while the check waits its turn
        in the server's queue. No reply is returned before the backbone has passed it."""
        backbone = self.backbone(request.role)
        self._breaker(backbone)
        check = self._check_job(backbone, request.role)
        if check is not None and check.done():
            await _passed(check, request)  # a backbone found unusable gets no more requests
        try:
            reply = await self._send_now(backbone, request, record, check)
        except Exception:
            if check is not None:  # the check's one-line diagnosis explains this failure best
                await _passed(check, request)
            raise
        if check is not None:
            await _passed(check, request)
        return reply

    async def _send_now(
        self,
        backbone: Backbone,
        request: ModelRequest,
        record: CallRecord,
        check: asyncio.Future[None] | None,
    ) -> ModelReply:
        throttle = self.throttle(backbone)
        await throttle.acquire()  # back-pressure first: a waiting request holds no slot
        outcome: BaseException | None = None
        replied = False
        try:
            async with self._here().semaphore:
                self._breaker(backbone)  # it may have opened while this request waited
                if check is not None and check.done():  # or the check may have failed
                    await _passed(check, request)
                here = self._here()
                if here.handing_over is None:
                    here.handing_over = here.loop.call_later(
                        SEND_GRACE_S, self._first_requests_sent, here
                    )
                started = time.perf_counter()
                try:
                    reply = await asyncio.wait_for(
                        backbone.complete(request), timeout=self.request_timeout_s
                    )
                    replied = True
                except TimeoutError as exc:
                    outcome = TransientModelError(
                        f"no complete reply within {self.request_timeout_s:g} s"
                    )
                    raise outcome from exc
                except BaseException as exc:
                    outcome = exc
                    raise
                finally:
                    record["latency_s"] = round(time.perf_counter() - started, 4)
                    record["ok"] = replied
        finally:
            transient = outcome if isinstance(outcome, TransientModelError) else None
            retry_after = None if transient is None else transient.retry_after
            await throttle.release(
                ok=replied,
                rate_limited=transient is not None and transient.rate_limited,
                retry_after=None if retry_after is None else min(retry_after, self.retry.max_s),
            )
        self._calls_failed_in_a_row[id(backbone)] = 0
        record["input_tokens"] = reply.input_tokens
        record["output_tokens"] = reply.output_tokens
        record["cached_input_tokens"] = reply.cached_tokens
        return reply

    async def pause(self, attempt: int, error: Exception) -> None:
        await asyncio.sleep(self.retry.pause(attempt, error, self._rng))

    async def aclose(self) -> None:
        on = self._on
        if on is not None and on.loop is asyncio.get_running_loop():
            for throttle in on.throttles.values():
                if throttle.watch is not None:
                    await throttle.watch.settle()
        if self.cache is not None:
            await asyncio.to_thread(self.cache.close)


def usage_totals(records: list[CallRecord], pricing: Pricing) -> dict[str, Any]:
    """The run manifest's accounting of a list of call records: requests per role (every HTTP
    attempt, failed ones included), tokens (reported, estimated, served from the server's
    prompt cache), images, cache hits, and the cost of the tokens actually billed (not those
    replayed from gaze's response cache)."""
    billed = [r for r in records if not r["cache_hit"]]
    calls = Counter(r["role"] for r in billed)
    return {
        "calls": dict(sorted(calls.items())),
        "failed_requests": sum(1 for r in billed if not r.get("ok", True)),
        "input_tokens": sum(r["input_tokens"] for r in records),
        "output_tokens": sum(r["output_tokens"] for r in records),
        "images": sum(r["images"] for r in records),
        "estimated_input_tokens": sum(r.get("estimated_input_tokens", 0) for r in billed),
        "cached_input_tokens": sum(r.get("cached_input_tokens", 0) for r in billed),
        "cache_hits": len(records) - len(billed),
        "cost_usd": pricing.cost(list(records)),
    }


async def _passed(check: asyncio.Future[None], request: ModelRequest) -> None:
    """Wait for a backbone's start-up check; raise its error unless the request is one the
    backbone takes (an endpoint that takes fewer images than gaze's largest request still takes
    requests of fewer)."""
    try:
        await asyncio.shield(check)
    except FewerImagesServed as exc:
        if not exc.allows(request.frames):
            raise
