"""Stand-in batch APIs on 127.0.0.1 for the real SDK clients: OpenAI's files and batches
endpoints, Gemini's batchGenerateContent and batches. Jobs finish after a number of polls;
chosen lines fail (a 500, once), are refused (a 400), or are cut off by a job that expires.

Use it as ``StandIn(router=BatchAPI(...))``: the live chat endpoints (the start-up check) are
answered by ``minimal_chat`` / ``minimal_gemini``, and so is every batch line that succeeds."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from email.parser import BytesParser
from typing import Any

from tests.standin import Reply, Seen, error_reply, gemini_reply, minimal_chat


def minimal_gemini(body: Any) -> Reply:
    """Answer a generateContent request with the smallest valid JSON for its schema."""
    from gaze.models.scripted import minimal_instance

    schema = (body or {}).get("generationConfig", {}).get("responseJsonSchema") or {}
    return gemini_reply(json.dumps(minimal_instance(schema)))


@dataclass
class Job:
    index: int
    provider: str
    label: str
    lines: list[tuple[str, Any]]
    """(key, request body) in order."""
    polls: int = 0
    outcome: dict[str, Any] | None = None


@dataclass
class BatchAPI:
    polls_to_finish: int = 1
    """Polls that find a job still running before it ends."""
    fail_once: Callable[[str, Any], bool] = lambda key, body: False
    """Lines (key, request body) answered 500 the first time their request is in a job."""
    fail_always: Callable[[str, Any], bool] = lambda key, body: False
    """Lines answered 503 every time."""
    refuse: Callable[[str, Any], bool] = lambda key, body: False
    """Lines answered 400 (each time)."""
    expire: Callable[[int], bool] = lambda index: False
    """Jobs (by creation order) that expire with only their first half of lines answered."""
    chat: Callable[[Any], Reply] = minimal_chat
    jobs: list[Job] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    answered: list[str] = field(default_factory=list)
    """Every line answered with a reply (keys, in order): a line billed twice shows twice."""
    failed_before: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, seen: Seen) -> Reply | None:
        path = seen.path.split("?")[0]
        with self._lock:
            if path.endswith(":generateContent"):
                return minimal_gemini(seen.body)
            if path.endswith("/chat/completions"):
                return self.chat(seen.body)
            if seen.method == "POST" and path.endswith("/files"):
                return self._upload(seen)
            if seen.method == "GET" and "/files/" in path and path.endswith("/content"):
                return Reply(200, self.files[path.split("/")[-2]])
            if seen.method == "POST" and path.endswith("/batches"):
                return self._openai_create(seen.body)
            if path.endswith(":batchGenerateContent"):
                return self._gemini_create(path, seen.body)
            if seen.method == "GET" and path.endswith("/batches"):
                return self._list(gemini="pageSize=" in seen.path)
            if seen.method == "GET" and "/batches/" in path:
                return self._poll(path.split("/batches/")[-1])
        return None

    # --- jobs --------------------------------------------------------------------------------

    def _line(self, job: Job, key: str, body: Any, position: int) -> tuple[int, Any]:
        """A line's status and body (``answered`` records each real reply)."""
        if self.expire(job.index) and position >= (len(job.lines) + 1) // 2:
            return 0, {"code": "batch_expired", "message": "the batch expired first"}
        if self.refuse(key, body):
            return 400, {"error": {"message": "invalid image", "code": "invalid_request"}}
        if self.fail_always(key, body):
            return 503, {"error": {"message": "overloaded", "code": "server_error"}}
        if self.fail_once(key, body) and key not in self.failed_before:
            self.failed_before.add(key)
            return 500, {"error": {"message": "internal error", "code": "server_error"}}
        self.answered.append(key)
        reply = self.chat(body) if job.provider == "openai" else minimal_gemini(body)
        return reply.status, reply.body

    def _finish(self, job: Job) -> None:
        lines = [self._line(job, k, b, i) for i, (k, b) in enumerate(job.lines)]
        expired = self.expire(job.index)
        if job.provider == "openai":
            output, errors = [], []
            for (key, _), (status, body) in zip(job.lines, lines, strict=True):
                if status == 0:
                    errors.append(
                        {"id": f"r-{key[:8]}", "custom_id": key, "response": None, "error": body}
                    )
                elif status == 200:
                    output.append(
                        {
                            "id": f"r-{key[:8]}",
                            "custom_id": key,
                            "response": {"status_code": 200, "body": body},
                            "error": None,
                        }
                    )
                else:
                    errors.append(
                        {
                            "id": f"r-{key[:8]}",
                            "custom_id": key,
                            "response": {"status_code": status, "body": body},
                            "error": None,
                        }
                    )
            out_id, err_id = f"file-out-{job.index}", f"file-err-{job.index}"
            self.files[out_id] = "".join(json.dumps(x) + "\n" for x in output).encode()
            self.files[err_id] = "".join(json.dumps(x) + "\n" for x in errors).encode()
            job.outcome = {
                "status": "expired" if expired else "completed",
                "output_file_id": out_id if output else None,
                "error_file_id": err_id if errors else None,
            }
            return
        responses = []
        for (key, _), (status, body) in zip(job.lines, lines, strict=True):
            if status == 200:
                responses.append({"response": body, "metadata": {"key": key}})
            elif status != 0:  # an expired job lists only what it finished
                code = 3 if status == 400 else 13
                responses.append(
                    {"error": {"code": code, "message": "failed"}, "metadata": {"key": key}}
                )
        job.outcome = {
            "state": "BATCH_STATE_EXPIRED" if expired else "BATCH_STATE_SUCCEEDED",
            "output": {"inlinedResponses": {"inlinedResponses": responses}},
        }

    def _poll(self, job_id: str) -> Reply:
        job = next((j for j in self.jobs if self._id(j) == job_id), None)
        if job is None:
            return error_reply(404, "no such batch")
        job.polls += 1
        if job.outcome is None and job.polls > self.polls_to_finish:
            self._finish(job)
        return Reply(200, self._view(job))

    def _id(self, job: Job) -> str:
        return f"batch_{job.index}" if job.provider == "openai" else f"{job.index}"

    def _view(self, job: Job) -> dict[str, Any]:
        if job.provider == "openai":
            return {
                "id": self._id(job),
                "object": "batch",
                "endpoint": "/v1/chat/completions",
                "input_file_id": f"file-in-{job.index}",
                "completion_window": "24h",
                "created_at": 0,
                "metadata": {"gaze_label": job.label},
                "status": "in_progress",
                **(job.outcome or {}),
            }
        return {
            "name": f"batches/{job.index}",
            "metadata": {
                "displayName": job.label,
                "model": "models/g",
                "state": "BATCH_STATE_RUNNING",
                **(job.outcome or {}),
            },
        }

    def _list(self, gemini: bool) -> Reply:
        if gemini:
            views = [self._view(j) for j in self.jobs if j.provider == "gemini"]
            return Reply(200, {"operations": views})
        views = [self._view(j) for j in self.jobs if j.provider == "openai"]
        return Reply(200, {"object": "list", "data": views[::-1], "has_more": False})

    # --- OpenAI ------------------------------------------------------------------------------

    def _upload(self, seen: Seen) -> Reply:
        head = f"content-type: {seen.headers['content-type']}\r\n\r\n".encode()
        message = BytesParser().parsebytes(head + seen.raw)
        content = next(
            part.get_payload(decode=True)
            for part in message.get_payload()
            if part.get_param("name", header="content-disposition") == "file"
        )
        file_id = f"file-in-{len(self.files)}"
        self.files[file_id] = content
        return Reply(
            200,
            {
                "id": file_id,
                "object": "file",
                "bytes": len(content),
                "created_at": 0,
                "filename": "in.jsonl",
                "purpose": "batch",
                "status": "processed",
            },
        )

    def _openai_create(self, body: Any) -> Reply:
        lines = [json.loads(x) for x in self.files[body["input_file_id"]].splitlines() if x]
        job = Job(
            len(self.jobs),
            "openai",
            body["metadata"]["gaze_label"],
            [(x["custom_id"], x["body"]) for x in lines],
        )
        self.jobs.append(job)
        return Reply(200, self._view(job))

    # --- Gemini ------------------------------------------------------------------------------

    def _gemini_create(self, path: str, body: Any) -> Reply:
        batch = body["batch"]
        requests = batch["inputConfig"]["requests"]["requests"]
        job = Job(
            len(self.jobs),
            "gemini",
            batch.get("displayName", ""),
            [(r["metadata"]["key"], r["request"]) for r in requests],
        )
        self.jobs.append(job)
        return Reply(200, self._view(job))
