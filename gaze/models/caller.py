"""Every backbone call goes through here: cache, bounded concurrency, backoff on transient errors,
and a usage record for the run manifest."""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_base

from gaze.models.cache import ResponseCache, cache_key
from gaze.models.protocol import Backbone, ModelReply, ModelRequest, TransientModelError


class CallRecord(TypedDict):
    """One backbone call as the run manifest counts it."""

    role: str
    model: str
    input_tokens: int
    output_tokens: int
    images: int
    latency_s: float
    cache_hit: bool
    attempts: int


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for transient errors (timeouts, 429, 5xx, resets)."""

    attempts: int = 5
    initial_s: float = 0.5
    max_s: float = 30.0


class _BackoffWait(wait_base):
    """Exponential backoff with full jitter; a server's Retry-After wins when it gives one."""

    def __init__(self, policy: RetryPolicy, rng: random.Random) -> None:
        self.policy = policy
        self.rng = rng

    def __call__(self, retry_state: RetryCallState) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        if isinstance(error, TransientModelError) and error.retry_after is not None:
            return min(max(error.retry_after, 0.0), self.policy.max_s)
        ceiling = min(
            self.policy.max_s, self.policy.initial_s * 2 ** (retry_state.attempt_number - 1)
        )
        return self.rng.uniform(ceiling / 2, ceiling)


class Caller:
    """Binds roles to backbones and makes their calls reliably and countably."""

    def __init__(
        self,
        bindings: Mapping[str, Backbone],
        *,
        endpoints: Mapping[str, str] | None = None,
        cache: ResponseCache | None = None,
        concurrency: int = 16,
        retry: RetryPolicy | None = None,
        seed: int = 0,
    ) -> None:
        self.bindings = dict(bindings)
        self.endpoints = dict(endpoints or {})
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self._semaphore = asyncio.Semaphore(max(1, concurrency))
        self._rng = random.Random(seed)

    def backbone(self, role: str) -> Backbone:
        try:
            return self.bindings[role]
        except KeyError:
            return self.bindings["default"]

    def model_name(self, role: str) -> str:
        backbone = self.backbone(role)
        return f"{backbone.provider}:{backbone.model}"

    async def complete(self, request: ModelRequest) -> tuple[ModelReply, CallRecord]:
        backbone = self.backbone(request.role)
        endpoint = self.endpoints.get(request.role, self.endpoints.get("default", ""))
        key = cache_key(backbone.provider, backbone.model, endpoint, request)
        record = CallRecord(
            role=request.role,
            model=self.model_name(request.role),
            input_tokens=0,
            output_tokens=0,
            images=request.images,
            latency_s=0.0,
            cache_hit=False,
            attempts=0,
        )
        cached = self.cache.get(key) if self.cache else None
        if cached is not None:
            record["cache_hit"] = True
            record["images"] = 0
            return cached, record
        started = time.perf_counter()
        async with self._semaphore:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception_type(TransientModelError),
                stop=stop_after_attempt(self.retry.attempts),
                wait=_BackoffWait(self.retry, self._rng),
                reraise=True,
            ):
                with attempt:
                    record["attempts"] += 1
                    reply = await backbone.complete(request)
        record["latency_s"] = round(time.perf_counter() - started, 4)
        record["input_tokens"] = reply.input_tokens
        record["output_tokens"] = reply.output_tokens
        if self.cache is not None and reply.refusal is None:
            self.cache.put(key, reply)
        return reply, record


def usage_totals(records: list[CallRecord], cost: Callable[[int, int], float]) -> dict[str, Any]:
    """The run manifest's accounting of a list of call records: calls per role (backbone calls
    only), tokens, images, cache hits, and the cost of the tokens actually billed (not those
    replayed from the cache)."""
    calls = Counter(r["role"] for r in records if not r["cache_hit"])
    billed = [r for r in records if not r["cache_hit"]]
    return {
        "calls": dict(sorted(calls.items())),
        "input_tokens": sum(r["input_tokens"] for r in records),
        "output_tokens": sum(r["output_tokens"] for r in records),
        "images": sum(r["images"] for r in records),
        "cache_hits": len(records) - len(billed),
        "cost_usd": cost(
            sum(r["input_tokens"] for r in billed), sum(r["output_tokens"] for r in billed)
        ),
    }
