"""A stand-in model server on 127.0.0.1 for the real SDK clients: it records every request
(path, headers, JSON body) and answers from a queue of scripted responses."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    drip_s: float = 0.0
    """Send the body one byte every drip_s seconds (a server that never quite stops)."""
    delay_s: float = 0.0
    """Wait this long before answering at all (a server that hangs)."""


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes = b""
    """The body exactly as it came over the wire."""


class _Server(ThreadingHTTPServer):
    request_queue_size = 256
    """A real server's listen backlog (socketserver's default of 5 resets the connections of a
    client with 32 requests in flight, which no production server does)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up mid-answer (a deadline, a closed run) is not news


class StandIn:
    """``with StandIn() as server:`` ... ``server.url``; queue replies with ``server.push``."""

    def __init__(
        self,
        default: Reply | None = None,
        responder: Callable[[Any], Reply] | None = None,
        router: Callable[[Seen], Reply | None] | None = None,
    ) -> None:
        """``router`` answers by method and path first (None: it does not serve that path)."""
        self.replies: deque[Reply] = deque()
        self.default = default
        self.responder = responder
        self.router = router
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = raw.decode(errors="replace")
                seen = Seen(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    raw,
                )
                routed = outer.router(seen) if outer.router is not None else None
                if routed is None and self.path == "/metrics":  # not a vLLM server's page
                    routed = error_reply(404, "not found")
                with outer._lock:
                    outer.seen.append(seen)
                    reply = routed or (outer.replies.popleft() if outer.replies else None)
                if reply is None and outer.responder is not None:
                    reply = outer.responder(body)
                reply = reply or outer.default
                if reply is None:
                    reply = Reply(500, {"error": {"message": "stand-in has no reply queued"}})
                payload = (
                    json.dumps(reply.body).encode()
                    if not isinstance(reply.body, bytes)
                    else reply.body
                )
                if reply.delay_s and outer._stopping.wait(reply.delay_s):
                    return
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                if not reply.drip_s:
                    self.wfile.write(payload)
                    return
                for i in range(len(payload)):  # bounded: one byte per step, stops on shutdown
                    if outer._stopping.wait(reply.drip_s):
                        return
                    self.wfile.write(payload[i : i + 1])
                    self.wfile.flush()

            do_POST = _serve  # noqa: N815
            do_GET = _serve  # noqa: N815

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        self._stopping = threading.Event()
        self._dead = False
        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def __enter__(self) -> StandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.die()

    def die(self) -> None:
        """Stop serving and close the listening socket (later connections are refused)."""
        with self._lock:
            if self._dead:
                return
            self._dead = True
        self._stopping.set()
        self.server.shutdown()
        self.server.server_close()


def schema_name(seen: Seen) -> str | None:
    """The structured-output schema a chat request asked for (None for other requests)."""
    if seen.method != "POST" or not isinstance(seen.body, dict):
        return None
    return seen.body.get("response_format", {}).get("json_schema", {}).get("name")


def clip_work(seen: list[Seen]) -> list[Seen]:
    """The requests that did clip work: not the start-up checks (probes, GET /models)."""
    return [s for s in seen if schema_name(s) not in (None, "Probe")]


PROBES = 2
"""Start-up requests that succeed before clip work: one image, then as many as gaze sends."""


def chat_reply(content: str, prompt_tokens: int = 11, completion_tokens: int = 7) -> Reply:
    """An OpenAI chat.completions response carrying ``content``."""
    return Reply(
        200,
        {
            "id": "chatcmpl-standin",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": content},
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        },
    )


def gemini_reply(text: str, prompt_tokens: int = 13, output_tokens: int = 5) -> Reply:
    """A Gemini generateContent response carrying ``text``."""
    return Reply(
        200,
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": text}]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": prompt_tokens,
                "candidatesTokenCount": output_tokens,
                "totalTokenCount": prompt_tokens + output_tokens,
            },
        },
    )


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, {"error": {"message": message, "code": status}}, headers or {})


def minimal_chat(body: Any) -> Reply:
    """Answer any structured-output chat request with the smallest valid JSON for its schema."""
    from gaze.models.scripted import minimal_instance

    if not isinstance(body, dict) or "response_format" not in body:  # e.g. GET /v1/models
        return error_reply(404, "not served here")
    schema = body["response_format"]["json_schema"]["schema"]
    return chat_reply(json.dumps(minimal_instance(schema)))


def probes_pass(otherwise: Reply) -> Callable[[Any], Reply]:
    """A server whose start-up checks pass and which answers every clip request ``otherwise``
    (by content, not by order: the first clip requests go out while the check runs)."""

    def respond(body: Any) -> Reply:
        if isinstance(body, dict) and "response_format" in body:
            if body["response_format"]["json_schema"]["name"] == "Probe":
                return minimal_chat(body)
            return otherwise
        return error_reply(404, "not served here")

    return respond


# --- Hosted-API behaviour under load (the regression wall's servers) -----------------------


def _request_key(body: Any) -> str:
    return json.dumps(body, sort_keys=True)


def each_new_request_fails_once(
    status: int = 429, retry_after: str | None = None, then: Callable[[Any], Reply] = minimal_chat
) -> Callable[[Any], Reply]:
    """A server under load: the first time it sees a request body it answers ``status`` (a 429,
    with ``retry_after`` if given, or a 5xx); the same request again is answered by ``then``.
    Start-up checks and clip work alike meet it, as every request to a hosted API would."""
    seen: set[str] = set()
    lock = threading.Lock()
    headers = {"retry-after": retry_after} if retry_after is not None else {}

    def respond(body: Any) -> Reply:
        if not isinstance(body, dict):
            return then(body)
        key = _request_key(body)
        with lock:
            new = key not in seen
            seen.add(key)
        return error_reply(status, "overloaded, try again", headers) if new else then(body)

    return respond


class RateLimited:
    """A server that serves ``capacity`` requests at once, ``latency_s`` each, and answers the
    rest 429 with a Retry-After of ``retry_after_s`` (a hosted API's per-key concurrency
    limit). ``max_in_flight`` is the most it served at once; ``refused`` how many clip requests
    it sent away (start-up checks are limited too, but not counted there)."""

    def __init__(self, capacity: int, latency_s: float = 0.2, retry_after_s: float = 0.5) -> None:
        self.capacity = capacity
        self.latency_s = latency_s
        self.retry_after_s = retry_after_s
        self.refused = 0
        self.served = 0
        self.max_in_flight = 0
        self._ends: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, body: Any) -> Reply:
        import time

        if not isinstance(body, dict) or "response_format" not in body:
            return minimal_chat(body)
        now = time.monotonic()
        with self._lock:
            self._ends = [end for end in self._ends if end > now]
            if len(self._ends) >= self.capacity:
                self.refused += body["response_format"]["json_schema"]["name"] != "Probe"
                return error_reply(429, "rate limited", {"retry-after": f"{self.retry_after_s:g}"})
            self._ends.append(now + self.latency_s)
            self.served += 1
            self.max_in_flight = max(self.max_in_flight, len(self._ends))
        reply = minimal_chat(body)
        reply.delay_s = self.latency_s
        return reply


def slow_replies(
    delay_s: float, then: Callable[[Any], Reply] = minimal_chat
) -> Callable[[Any], Reply]:
    """Every clip request answered after ``delay_s`` (a large model near the timeout); start-up
    checks answer at once."""

    def respond(body: Any) -> Reply:
        reply = then(body)
        if isinstance(body, dict) and schema_name(Seen("POST", "", {}, body)) not in (
            None,
            "Probe",
        ):
            reply.delay_s = delay_s
        return reply

    return respond


def dies_after(requests: int, server_of: Callable[[], StandIn]) -> Callable[[Any], Reply]:
    """An endpoint that answers ``requests`` clip requests, then goes away mid-run: its
    listening socket closes (new connections are refused) and the request that found it dying
    gets a 503."""
    count = {"n": 0}
    lock = threading.Lock()

    def respond(body: Any) -> Reply:
        if not isinstance(body, dict) or schema_name(Seen("POST", "", {}, body)) in (None, "Probe"):
            return minimal_chat(body)
        with lock:
            count["n"] += 1
            dead = count["n"] > requests
        if dead:
            server = server_of()
            threading.Thread(target=server.die, daemon=True).start()
            return error_reply(503, "shutting down")
        return minimal_chat(body)

    return respond


def queue_metrics(waiting: int) -> Reply:
    """vLLM's ``/metrics`` page, as far as gaze reads it: the requests waiting in its queue."""
    page = (
        "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
        "# TYPE vllm:num_requests_waiting gauge\n"
        f'vllm:num_requests_waiting{{engine="0",model_name="m"}} {float(waiting)}\n'
    )
    return Reply(200, page.encode(), {"content-type": "text/plain; version=0.0.4"})


class Queueing:
    """A server of ``slots`` that serves that many requests at once, ``latency_s`` each, and
    queues the rest as vLLM does past ``max_num_seqs`` (or, with ``refuse``, answers them 429
    with a Retry-After of ``latency_s``, as a hosted API's concurrency limit does);
    ``/metrics`` reports its queue when ``reports_queue``. It keeps each served request's
    (start, end) times, the queue each clip request met, and the deepest queue."""

    def __init__(
        self,
        slots: int,
        latency_s: float = 0.2,
        *,
        reports_queue: bool = True,
        refuse: bool = False,
        answer: Callable[[Any], Reply] = minimal_chat,
    ) -> None:
        self.slots = slots
        self.latency_s = latency_s
        self.reports_queue = reports_queue
        self.refuse = refuse
        self.answer = answer
        self.busy = 0
        self.waiting = 0
        self.most_waiting = 0
        self.refused = 0
        self.queue_reads = 0
        """Times ``/metrics`` was read (the client's watches of the queue)."""
        self.queue_at_arrival: list[int] = []
        """The queue's length as each clip request arrived, in order."""
        self.served: list[tuple[float, float]] = []
        self._lock = threading.Condition()

    def settled_queue(self) -> int:
        """The queue requests met over the middle half of the run, at its upper quartile."""
        n = len(self.queue_at_arrival)
        middle = sorted(self.queue_at_arrival[n // 4 : 3 * n // 4])
        return middle[3 * len(middle) // 4] if middle else 0

    def metrics(self, seen: Seen) -> Reply | None:
        if seen.path != "/metrics" or not self.reports_queue:
            return None
        with self._lock:
            self.queue_reads += 1
            return queue_metrics(self.waiting)

    def __call__(self, body: Any) -> Reply:
        import time

        answer = self.answer(body)
        if not isinstance(body, dict) or "response_format" not in body:
            return answer
        with self._lock:
            if self.busy >= self.slots and self.refuse:
                self.refused += 1
                retry = f"{self.latency_s:g}"
                return error_reply(429, "too many requests", {"retry-after": retry})
            self.queue_at_arrival.append(self.waiting)
            if self.busy >= self.slots:
                self.waiting += 1
                self.most_waiting = max(self.most_waiting, self.waiting)
                while self.busy >= self.slots:
                    self._lock.wait()
                self.waiting -= 1
            self.busy += 1
        start = time.monotonic()
        time.sleep(self.latency_s)
        with self._lock:
            self.busy -= 1
            self.served.append((start, time.monotonic()))
            self._lock.notify()
        return answer
