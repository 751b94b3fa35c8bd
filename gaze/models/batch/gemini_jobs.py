"""Gemini's batch mode: inline requests (each job under the API's 20 MB request), their
responses inline in the finished job, in order, each with the key it was sent with."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from gaze.models.batch.jobs import Collected, Line, chunked
from gaze.models.protocol import (
    MALFORMED_BODY_ERRORS,
    ImagePart,
    ModelCallError,
    TransientModelError,
)
from gaze.models.providers.gemini import api_error, is_transport_error, reply_of

MAX_LINES = 10_000
MAX_BYTES = 14 * 1024 * 1024
"""Raw bytes of one job's requests: base64 makes them a third larger, under the 20 MB limit."""
RUNNING = frozenset(
    {"JOB_STATE_QUEUED", "JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_UPDATING"}
    | {"JOB_STATE_CANCELLING", "JOB_STATE_PAUSED"}
)
REFUSED_CODES = frozenset({3, 5, 7, 9, 11, 12, 16})
"""google.rpc codes of a line that fails the same way when sent again (INVALID_ARGUMENT,
NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION, OUT_OF_RANGE, UNIMPLEMENTED,
UNAUTHENTICATED); the others (RESOURCE_EXHAUSTED, INTERNAL, UNAVAILABLE ...) may pass later."""

UNUSABLE: tuple[type[BaseException], ...] = (TransientModelError, *MALFORMED_BODY_ERRORS)
UNREACHABLE: tuple[type[BaseException], ...] = (OSError, *MALFORMED_BODY_ERRORS)

T = TypeVar("T")


def request_bytes(line: Line) -> int:
    _, request = line
    return sum(
        len(p.jpeg) if isinstance(p, ImagePart) else len(getattr(p, "text", "")) + 16
        for m in request.messages
        for p in m.parts
    ) + len(str(request.json_schema or ""))


class GeminiJobs:
    """Batch jobs through the live backbone's own SDK client."""

    def __init__(self, live: Any) -> None:
        from google.genai import errors, types

        self._live = live
        self._client = live._client
        self._types = types
        self._errors = errors
        self.model: str = live.model

    def split(self, lines: Sequence[Line]) -> list[list[Line]]:
        return list(chunked(lines, request_bytes, MAX_LINES, MAX_BYTES))

    async def submit(self, lines: Sequence[Line], label: str) -> str:
        inlined = []
        for key, request in lines:
            contents, config = self._live.prompt(request)
            inlined.append(
                self._types.InlinedRequest(contents=contents, config=config, metadata={"key": key})
            )
        job = await self._api(
            self._client.aio.batches.create(
                model=self.model, src=inlined, config={"display_name": label}
            )
        )
        return str(job.name)

    async def find(self, label: str) -> str | None:
        async def first() -> str | None:
            async for job in await self._client.aio.batches.list(config={"page_size": 100}):
                if job.display_name == label:
                    return str(job.name)
            return None

        return await self._api(first())

    async def collect(self, job_id: str) -> Collected:
        try:
            job = await self._api(self._client.aio.batches.get(name=job_id))
        except ModelCallError as exc:
            return Collected(f"gone ({exc})", running=False)
        state = getattr(job.state, "value", str(job.state))
        if state in RUNNING:
            return Collected(state, running=True)
        found = Collected(state, running=False)
        responses = (job.dest.inlined_responses if job.dest is not None else None) or []
        for item in responses:
            key = (item.metadata or {}).get("key")
            if not key:
                continue  # unmatched: its request is sent again
            if item.error is not None:
                code = item.error.code or 0
                message = f"{code}: {item.error.message or 'error'}"
                (found.refused if code in REFUSED_CODES else found.failed)[key] = message
                continue
            try:
                found.replies[key] = reply_of(item.response)
            except UNUSABLE as exc:
                found.failed[key] = f"unusable response ({exc})"
        return found

    async def _api(self, call: Awaitable[T]) -> T:
        """One request to the batches API, its errors as gaze's."""
        try:
            return await call
        except self._errors.APIError as exc:
            raise api_error(exc, "the Gemini batch API", "Gemini batch API") from exc
        except UNREACHABLE as exc:
            raise TransientModelError(f"cannot reach the Gemini batch API: {exc}") from exc
        except Exception as exc:
            if is_transport_error(exc):
                raise TransientModelError(f"cannot reach the Gemini batch API: {exc}") from exc
            raise
