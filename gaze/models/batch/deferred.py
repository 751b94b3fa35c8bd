"""The backbone a batch round runs clips against: replies from collected batches, everything
else registered for the next batch job."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langgraph.errors import GraphBubbleUp

from gaze.models.cache import ResponseCache
from gaze.models.caller import Caller
from gaze.models.prices import BATCH_RATE
from gaze.models.protocol import (
    Backbone,
    ModelCallError,
    ModelReply,
    ModelRequest,
    NoReplyError,
)

PREFLIGHT_ROLE = "preflight"
"""The start-up check's role: it stays a live call (a bad key or model fails the round at
once, not a day later line by line)."""


class CallDeferred(GraphBubbleUp):
    """A request went into the next batch job: its clip stops here and goes on next round.

    A LangGraph bubble-up, not a failure: the graph lets the node's siblings in the same step
    finish (and register their own requests) before it stops, as it does for an interrupt."""

    def __init__(self, key: str) -> None:
        super().__init__(f"waiting for a batch reply ({key[:12]})")
        self.key = key


@dataclass
class LineFailure:
    """What went wrong with a request's batch lines so far."""

    attempts: int = 0
    """Lines that got no usable reply (a 429 or 5xx line, an expired or failed job)."""
    permanent: str = ""
    """A line the API refused for good (a 400): the call fails as a live 400 does."""


@dataclass
class Book:
    """What a round knows: collected replies (by request key), failed lines, the requests of
    jobs still running, and the requests this round registered."""

    replies: ResponseCache
    budget: int
    """Lines a request may lose before its call fails (1 + ``max_retries``, as live)."""
    failures: dict[str, LineFailure] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)
    """Keys in a job still running: not sent again."""
    registered: dict[str, tuple[Backbone, ModelRequest]] = field(default_factory=dict)
    """This round's new requests, by key, with the live backbone that will carry them."""
    live_roles: frozenset[str] = frozenset()
    """Roles whose calls go out live at the full price (``--batch-live``): a clip passes their
    stage within a round instead of waiting a round for it."""
    live_sent: int = 0
    """Requests this round sent live (their replies are kept beside the batch replies)."""


class BatchFirstCache(ResponseCache):
    """The response cache as a batch round reads it: a reply some batch job gave is not taken
    from here but from the job's store (through ``DeferredBackbone``), so the report counts its
    call as billed, which it was; every other reply is the cache's, a free hit as always."""

    def __init__(self, cache: ResponseCache, store: ResponseCache) -> None:
        super().__init__(cache.folder)
        self.store = store

    async def aget(self, key: str) -> ModelReply | None:
        if await self.store.aget(key) is not None:
            return None
        return await super().aget(key)


class DeferredBackbone:
    """Wraps a live backbone for a batch round (same provider and model, so the same keys)."""

    def __init__(self, live: Backbone, book: Book, key: Callable[[ModelRequest], str]) -> None:
        self.live = live
        self.provider = live.provider
        self.model = live.model
        self.native_json_schema = live.native_json_schema
        self.image_detail: Any = getattr(live, "image_detail", "auto")
        self._book = book
        self._key = key

    async def complete(self, request: ModelRequest) -> ModelReply:
        if request.role == PREFLIGHT_ROLE:
            return await self.live.complete(request)
        book, key = self._book, self._key(request)
        reply = await book.replies.aget(key)
        if reply is not None:
            return reply
        if request.role in book.live_roles:
            # kept with the batch replies, valid or not: later rounds replay the clip's calls
            # from there (with or without the response cache) and never send it again
            reply = await self.live.complete(request)
            await book.replies.aput(key, reply)
            book.live_sent += 1
            return reply
        failure = book.failures.get(key)
        if failure is not None and failure.permanent:
            raise ModelCallError(failure.permanent)
        if failure is not None and failure.attempts >= book.budget:
            raise NoReplyError(
                f"{request.role}: {failure.attempts} batch lines of {self.provider}:{self.model} "
                "got no reply"
            )
        if key not in book.pending:
            book.registered[key] = (self.live, request)
        raise CallDeferred(key)


@contextmanager
def deferring(caller: Caller, book: Book) -> Iterator[Caller]:
    """``caller`` as a batch round uses it: every backbone deferred to the book, replies a job
    gave taken from the job's store, calls billed at the batch rate (the book's live roles in
    full); as it was afterwards."""
    bindings, pricing, cache = caller.bindings, caller.pricing, caller.cache
    caller.pricing = pricing.at_rate(BATCH_RATE, book.live_roles)
    caller.cache = None if cache is None else BatchFirstCache(cache, book.replies)
    caller.bindings = {
        role: DeferredBackbone(backbone, book, caller.key) for role, backbone in bindings.items()
    }
    try:
        yield caller
    finally:
        caller.bindings, caller.pricing, caller.cache = bindings, pricing, cache
