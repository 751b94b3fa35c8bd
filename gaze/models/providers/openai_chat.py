"""OpenAI and every OpenAI-compatible server (vLLM, SGLang, Ollama, gateways) via a base URL."""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import os
import secrets
from collections.abc import Callable
from typing import Any

from gaze.models import defaults
from gaze.models.protocol import (
    MALFORMED_BODY_ERRORS,
    ImagePart,
    Message,
    ModelCallError,
    ModelConfigError,
    ModelReply,
    ModelRequest,
    Part,
    TransientModelError,
    VideoPart,
    as_count,
    retry_after_header,
    status_error,
)
from gaze.models.providers import legacy_httpx
from gaze.models.providers.openai_import import defer_openai_types
from gaze.redact import public_url, redact
from gaze.video.frames import jpeg_data_url

PLACEHOLDER_KEY = "not-needed"
"""Local OpenAI-compatible servers usually need no key, but the SDK insists on one."""

SEND_OPTIONS: Any = {"security": {"bearer_auth": True}}
"""Requests go through the SDK client's own ``post`` (its documented route for any endpoint):
``chat.completions.create`` first walks the whole body against its TypedDict unions, about
7 ms of event-loop CPU for a request with 30 frames, and changes nothing in a body made of
plain JSON values like gaze's. ``create`` asks for bearer auth this way (SDK 2.40 and later;
earlier versions always send the key and ignore the option). The JSON and headers sent are the
same: ``tests/models/test_openai_provider.py`` compares them with ``create``'s."""


def media_url(part: ImagePart | VideoPart) -> bytes:
    """The data URL an image or a video goes as (base64, plain ASCII). A video goes as vLLM
    takes a sequence of frames, ``data:video/jpeg;base64,`` then each JPEG in base64,
    comma-separated (the frames as sent, none re-sampled while the server's video
    ``num_frames`` allows them)."""
    if isinstance(part, ImagePart):
        return jpeg_data_url(part.jpeg)
    return b"data:video/jpeg;base64," + b",".join(base64.b64encode(f.jpeg) for f in part.frames)


MediaUrl = Callable[[ImagePart | VideoPart], str]


def _url_text(part: ImagePart | VideoPart) -> str:
    return media_url(part).decode("ascii")


def chat_part(part: Part, detail: str = "auto", url: MediaUrl = _url_text) -> dict[str, Any]:
    """One content part of an OpenAI-style chat message (``url`` writes an image's or a
    video's URL)."""
    if isinstance(part, ImagePart):
        image = {} if detail == "auto" else {"detail": detail}
        return {"type": "image_url", "image_url": {"url": url(part), **image}}
    if isinstance(part, VideoPart):
        return {"type": "video_url", "video_url": {"url": url(part)}}
    return {"type": "text", "text": part.text}


def _content(message: Message, detail: str, url: MediaUrl) -> Any:
    if message.role != "user":
        return "".join(getattr(p, "text", "") for p in message.parts)
    return [chat_part(p, detail, url) for p in message.parts]


def request_body(
    model: str, request: ModelRequest, detail: str = "auto", url: MediaUrl = _url_text
) -> dict[str, Any]:
    """The JSON body of a chat completion request (keys in the order recent SDKs'
    ``chat.completions.create`` writes them)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": m.role, "content": _content(m, detail, url)} for m in request.messages
        ],
        "max_tokens": request.max_output_tokens,
    }
    if request.json_schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema_name,
                "schema": request.json_schema,
                "strict": True,
            },
        }
    body["temperature"] = request.temperature
    videos = [p for m in request.messages for p in m.parts if isinstance(p, VideoPart)]
    if videos:
        body["media_io_kwargs"] = video_io(videos[0].fps)
    return body


def request_json(model: str, request: ModelRequest, detail: str = "auto") -> bytes:
    """``request_body`` as the bytes the SDK would write for it (compact UTF-8 JSON, as its
    ``openapi_dumps``), with each image's base64 put in as it is rather than scanned by the
    JSON encoder: serialising a request of 25 frames scanned 0.8 MB of base64 for characters
    to escape (it has none), about 1.5 ms of event-loop time per request, between a reply and
    the requests that wait for it. The body is serialised with a one-off token in each URL's
    place, then each token replaced by its URL, in order."""
    token = f"gaze-media-{secrets.token_hex(16)}"
    urls: list[bytes] = []

    def hold(part: ImagePart | VideoPart) -> str:
        urls.append(media_url(part))
        return token

    body = request_body(model, request, detail, hold)
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    pieces = text.encode("utf-8").split(token.encode("ascii"))
    if len(pieces) != len(urls) + 1:  # never: the token is new, and URLs are ASCII
        raise AssertionError("a media token went missing from the request")
    out = [pieces[0]]
    for url, piece in zip(urls, pieces[1:], strict=True):
        out += [url, piece]
    return b"".join(out)


def video_io(fps: float) -> dict[str, dict[str, Any]]:
    """vLLM's per-request media settings (merged with the server's ``--media-io-kwargs``; a
    server that does not know the field ignores it): every frame of a video kept (its default
    keeps 32), and the frames' own rate, which the model's time stamps are computed from (its
    default assumes 1 frame per second)."""
    return {"video": {"num_frames": -1, **({"fps": fps} if fps > 0 else {})}}


class OpenAIChat:
    """The ``openai`` provider."""

    provider = "openai"
    native_json_schema = True

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        timeout_s: float = defaults.REQUEST_TIMEOUT_S,
        key_env: str | None = None,
        image_detail: str = "auto",
    ) -> None:
        defer_openai_types()
        try:
            import openai
        except ImportError:
            raise ModelConfigError(
                "the openai provider needs the openai SDK: pip install 'gaze[openai]'"
            ) from None
        legacy_httpx.settle_on_build()
        key = os.environ.get(key_env or "OPENAI_API_KEY")
        if not key and not base_url:
            raise ModelConfigError(
                "OPENAI_API_KEY is not set (or give --base-url for a local server)"
            )
        self.model = model
        self.base_url = base_url
        self.image_detail = image_detail
        self._openai = openai
        # gaze retries with its own backoff (and counts attempts): the SDK must not retry too.
        self._client = openai.AsyncOpenAI(
            api_key=key or PLACEHOLDER_KEY, base_url=base_url, max_retries=0, timeout=timeout_s
        )
        from openai.types.chat import ChatCompletion

        self._completion = ChatCompletion
        self._sends_bytes = "content" in inspect.signature(self._client.post).parameters

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        """The request's body as ``post`` takes it: the bytes ``request_json`` makes where the
        SDK's ``post`` sends given bytes (its ``content`` parameter), else the JSON value (older
        SDKs serialise it themselves)."""
        if self._sends_bytes:
            return {"content": request_json(self.model, request, self.image_detail)}
        return {"body": request_body(self.model, request, self.image_detail)}

    async def context_length(self) -> int | None:
        """The served model's context length where the server says (vLLM's ``max_model_len``
        on ``/v1/models``), or the listed one of a model on OpenAI's own API (which does not
        say); None when neither is known."""
        if not self.base_url:
            from gaze.models.prices import listed_context

            return await asyncio.to_thread(listed_context, f"openai:{self.model}")
        try:
            return await _models_context(self._client)
        except Exception:  # a server without /models, or an odd reply: nothing learned
            return None

    async def queue_waiting(self) -> int | None:
        """Requests waiting in the server's queue, where it reports them (vLLM's ``/metrics``:
        ``vllm:num_requests_waiting``, beside its API); None for a server that does not (a
        hosted API, another server): the caller then stops asking."""
        if not self.base_url:
            return None
        try:
            page = await self._client.get(
                metrics_url(self.base_url), cast_to=str, options={"timeout": METRICS_TIMEOUT_S}
            )
        except self._openai.NotFoundError:
            return None  # other errors (a busy server's 500) say nothing this time
        return waiting_in(page) if isinstance(page, str) else None

    async def complete(self, request: ModelRequest) -> ModelReply:
        openai = self._openai
        try:
            response = await self._client.post(
                "/chat/completions",
                cast_to=self._completion,
                **self._body(request),
                options=SEND_OPTIONS,
            )
        except (openai.APIError, *MALFORMED_BODY_ERRORS) as exc:
            not_found = ModelConfigError(f"model {self.model!r} not found at the server")
            raise api_error(openai, exc, self.base_url, "server", not_found=not_found) from exc
        return reply_of(response, self.base_url)


def api_error(
    openai: Any,
    exc: BaseException,
    base_url: str | None,
    service: str,
    *,
    not_found: Exception | None = None,
) -> Exception:
    """gaze's error for what the openai SDK raised, for live calls and batch jobs alike: an
    HTTP status by the one rule (``gaze.models.protocol.status_error``); no connection, a
    timeout or a body that is not the API's JSON is transient."""
    where = public_url(base_url) if base_url else "the OpenAI API"
    if isinstance(exc, openai.APIStatusError):
        return status_error(
            exc.status_code,
            where,
            service,
            _message(exc),
            retry_after=retry_after_header(exc),
            not_found=not_found,
        )
    if isinstance(exc, (openai.APIResponseValidationError, *MALFORMED_BODY_ERRORS)):
        return TransientModelError(_malformed(base_url, exc))
    return TransientModelError(redact(f"cannot reach {where}: {exc}"))


def reply_of(response: Any, base_url: str | None = None) -> ModelReply:
    """A chat completion (live, or one line of a batch's output) as a reply; a body that is
    not the API's JSON is a transient error, like a dropped connection."""
    try:
        choices = response.choices
        if not choices:
            raise ModelCallError("the server returned no choices")
        message = choices[0].message
        text, refusal = message.content, getattr(message, "refusal", None)
        usage = response.usage
    except MALFORMED_BODY_ERRORS as exc:
        raise TransientModelError(_malformed(base_url, exc)) from exc
    if not isinstance(text, str | None) or not isinstance(refusal, str | None):
        raise TransientModelError(_malformed(base_url, TypeError("content")))
    return ModelReply(
        text=text or "",
        input_tokens=as_count(getattr(usage, "prompt_tokens", 0)),
        output_tokens=as_count(getattr(usage, "completion_tokens", 0)),
        refusal=refusal,
        cached_tokens=as_count(
            getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", 0)
        ),
    )


METRICS_TIMEOUT_S = 2.0
WAITING_METRIC = "vllm:num_requests_waiting"


def metrics_url(base_url: str) -> str:
    """vLLM serves ``/metrics`` at its root, beside ``/v1``."""
    root = base_url.rstrip("/")
    return (root[: -len("/v1")] if root.endswith("/v1") else root) + "/metrics"


def waiting_in(text: str) -> int | None:
    """The waiting requests a Prometheus text page reports (summed over its series); None
    when the page has no such metric."""
    found = None
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name != WAITING_METRIC:
            continue
        after = line[line.rindex("}") + 1 :] if "{" in line else line[len(name) :]
        try:
            value = float(after.split()[0])
        except (IndexError, ValueError):
            continue
        found = (found or 0) + int(value)
    return found


async def _models_context(client: Any) -> int | None:
    page = await client.models.list()
    for model in getattr(page, "data", []) or []:
        extra = getattr(model, "model_extra", None) or {}
        value = extra.get("max_model_len")
        if isinstance(value, int) and value > 0:
            return value
    return None


def _malformed(base_url: str | None, exc: BaseException) -> str:
    where = public_url(base_url) if base_url else "the OpenAI API"
    return f"malformed response body from {where} ({type(exc).__name__}: not the API's JSON)"


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", exc))
