"""Waiting for sibling calls: every one of them finishes before the first error is raised.

``asyncio.gather`` raises the first error at once and leaves the rest running unawaited (a node
then cancels them): a sibling's call that was about to go out never does. A batch run needs
every sibling's request registered before a clip stops (``gaze.models.batch``), and a live run
keeps what the siblings were sending (their replies reach the cache) instead of throwing it
away."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def all_settled(*jobs: Awaitable[T]) -> list[T]:
    """The results in order, once every job has finished; then the first error, if any."""
    outcomes = await asyncio.gather(*jobs, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return outcomes  # type: ignore[return-value]  # no exception left: every one is a T
