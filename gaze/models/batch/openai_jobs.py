"""OpenAI's Batch API (and any server that serves ``/v1/files`` and ``/v1/batches``): a JSONL
file of chat completion requests, one job, the output and error files when it ends."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from gaze.models.batch.jobs import Collected, Line, chunked
from gaze.models.protocol import (
    MALFORMED_BODY_ERRORS,
    TRANSIENT_STATUS,
    ModelCallError,
    TransientModelError,
)
from gaze.models.providers.openai_chat import api_error, reply_of, request_body

ENDPOINT = "/v1/chat/completions"
RUNNING = frozenset({"validating", "in_progress", "finalizing", "cancelling"})
MAX_LINES = 50_000
MAX_BYTES = 190 * 1024 * 1024
"""Under the API's 200 MB input file."""
UNUSABLE: tuple[type[BaseException], ...] = (
    TransientModelError,
    ModelCallError,
    *MALFORMED_BODY_ERRORS,
)
"""What reading a 200 line can raise: the line is failed, its request sent again."""

T = TypeVar("T")


class OpenAIJobs:
    """Batch jobs through the live backbone's own SDK client (same key, same endpoint)."""

    def __init__(self, live: Any) -> None:
        import openai
        from openai.types.chat import ChatCompletion

        self._openai = openai
        self._completion = ChatCompletion
        self._client = live._client
        self.model: str = live.model
        self.base_url: str | None = live.base_url
        self.image_detail: str = live.image_detail

    def lines_of(self, lines: Sequence[Line]) -> list[bytes]:
        """Each request as one line of the job's input file."""
        return [
            json.dumps(
                {
                    "custom_id": key,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": request_body(self.model, request, self.image_detail),
                },
                separators=(",", ":"),
            ).encode()
            + b"\n"
            for key, request in lines
        ]

    def split(self, lines: Sequence[Line]) -> list[list[Line]]:
        sizes = {key: len(line) for (key, _), line in zip(lines, self.lines_of(lines), strict=True)}
        return list(chunked(lines, lambda item: sizes[item[0]], MAX_LINES, MAX_BYTES))

    async def submit(self, lines: Sequence[Line], label: str) -> str:
        payload = b"".join(self.lines_of(lines))
        uploaded = await self._api(
            self._client.files.create(
                file=(f"{label}.jsonl", payload, "application/jsonl"), purpose="batch"
            )
        )
        job = await self._api(
            self._client.batches.create(
                input_file_id=uploaded.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={"gaze_label": label},
            )
        )
        return str(job.id)

    async def find(self, label: str) -> str | None:
        async def first() -> str | None:
            async for job in self._client.batches.list(limit=100):
                if (job.metadata or {}).get("gaze_label") == label:
                    return str(job.id)
            return None

        return await self._api(first())

    async def collect(self, job_id: str) -> Collected:
        try:
            job = await self._api(self._client.batches.retrieve(job_id))
        except ModelCallError as exc:  # a job the API no longer knows: its lines go again
            return Collected(f"gone ({exc})", running=False)
        if job.status in RUNNING:
            return Collected(str(job.status), running=True)
        found = Collected(str(job.status), running=False)
        for file_id in (job.output_file_id, job.error_file_id):
            if file_id:
                content = await self._api(self._client.files.content(file_id))
                for raw in content.text.splitlines():
                    if raw.strip():
                        self._read_line(raw, found)
        return found

    def _read_line(self, raw: str, found: Collected) -> None:
        try:
            line = json.loads(raw)
            key = str(line["custom_id"])
        except MALFORMED_BODY_ERRORS:
            return  # a line without its id cannot be matched: its request is sent again
        response = line.get("response") or {}
        status = response.get("status_code") if isinstance(response, dict) else None
        body = response.get("body") if isinstance(response, dict) else None
        if status == 200:
            try:
                found.replies[key] = reply_of(self._completion.model_validate(body), self.base_url)
            except UNUSABLE as exc:
                found.failed[key] = f"unusable line ({exc})"
            return
        message = _message(body, line.get("error"))
        if isinstance(status, int) and 400 <= status < 500 and status not in TRANSIENT_STATUS:
            found.refused[key] = f"{status}: {message}"
        else:
            found.failed[key] = f"{status or 'no status'}: {message}"

    async def _api(self, call: Awaitable[T]) -> T:
        """One request to the files or batches API, its errors as gaze's (a 404 is a failed
        call: ``collect`` sends a job's lines again when the API no longer knows the job)."""
        try:
            return await call
        except self._openai.APIError as exc:
            raise api_error(self._openai, exc, self.base_url, "batch API") from exc


def _message(body: Any, error: Any) -> str:
    for source in (body, error):
        if isinstance(source, dict):
            inner = source.get("error", source)
            if isinstance(inner, dict) and inner.get("message"):
                return str(inner.get("code") or "") + " " + str(inner["message"])
    return "no reply"
