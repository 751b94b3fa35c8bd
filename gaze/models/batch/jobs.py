"""Batch jobs at a provider: submit a round's requests, find a job a crash left unrecorded,
collect a finished job's replies. One class per API (``openai_jobs``, ``gemini_jobs``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from gaze.errors import GazeInputError
from gaze.models.protocol import Backbone, ModelReply, ModelRequest

Line = tuple[str, ModelRequest]
"""A request of a job and its key (the job's ``custom_id``; the response cache's key)."""

T = TypeVar("T")


@dataclass
class Collected:
    """A job as a poll found it: still running, or finished with what each line gave."""

    status: str
    """The provider's own word (``in_progress``, ``completed``, ``BATCH_STATE_EXPIRED`` ...)."""
    running: bool
    replies: dict[str, ModelReply] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    """Lines without a usable reply that may succeed when sent again (429, 5xx, expired)."""
    refused: dict[str, str] = field(default_factory=dict)
    """Lines the API refused for good (a 400): sending them again changes nothing."""


class BatchJobs(Protocol):
    """One provider's batch API, for one model."""

    def split(self, lines: Sequence[Line]) -> list[list[Line]]:
        """``lines`` cut into jobs within the API's limits on lines and bytes per job."""
        ...

    async def submit(self, lines: Sequence[Line], label: str) -> str:
        """Start a job of ``lines``, named ``label``; its id."""
        ...

    async def find(self, label: str) -> str | None:
        """The id of a job started under ``label`` (a crash between submitting and recording
        it must not make the next round pay for it again)."""
        ...

    async def collect(self, job_id: str) -> Collected: ...


def jobs_for(live: Backbone) -> BatchJobs:
    """The batch API of a live backbone's provider (imported only when a batch run asks)."""
    if live.provider == "openai":
        from gaze.models.batch.openai_jobs import OpenAIJobs

        return OpenAIJobs(live)
    if live.provider == "gemini":
        from gaze.models.batch.gemini_jobs import GeminiJobs

        return GeminiJobs(live)
    raise GazeInputError(
        f"--batch-api needs the openai or gemini provider with one endpoint "
        f"({live.provider}:{live.model} has no batch API)"
    )


def chunked(
    items: Sequence[T], size_of: Callable[[T], int], max_items: int, max_bytes: int
) -> Iterator[list[T]]:
    """``items`` in order, cut into jobs within a provider's limits on lines and bytes (a
    single item over ``max_bytes`` goes alone: the API refuses it and says why)."""
    chunk: list[T] = []
    used = 0
    for item in items:
        size = size_of(item)
        if chunk and (len(chunk) >= max_items or used + size > max_bytes):
            yield chunk
            chunk, used = [], 0
        chunk.append(item)
        used += size
    if chunk:
        yield chunk
