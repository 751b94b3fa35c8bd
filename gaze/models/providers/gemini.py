"""Google Gemini through the google-genai SDK (inline image parts, JSON schema in the config)."""

from __future__ import annotations

import os
from typing import Any

from gaze.models import defaults
from gaze.models.protocol import (
    MALFORMED_BODY_ERRORS,
    ImagePart,
    ModelConfigError,
    ModelReply,
    ModelRequest,
    TransientModelError,
    as_count,
    retry_after_header,
    status_error,
)


class GeminiChat:
    """The ``gemini`` provider."""

    provider = "gemini"
    native_json_schema = True

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        timeout_s: float = defaults.REQUEST_TIMEOUT_S,
        key_env: str | None = None,
    ) -> None:
        try:
            from google import genai
            from google.genai import errors, types
        except ImportError:
            raise ModelConfigError(
                "the gemini provider needs google-genai: pip install 'gaze[gemini]'"
            ) from None
        key = (
            os.environ.get(key_env)
            if key_env
            else os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
        )
        if not key:
            raise ModelConfigError("GEMINI_API_KEY (or GOOGLE_API_KEY) is not set")
        self.model = model
        self._types = types
        self._errors = errors
        # gaze retries with its own budget (and counts attempts): the SDK must not retry too.
        options = types.HttpOptions(
            base_url=base_url,
            timeout=int(timeout_s * 1000),
            retry_options=types.HttpRetryOptions(attempts=1),
        )
        self._client = genai.Client(api_key=key, http_options=options)

    def prompt(self, request: ModelRequest) -> tuple[list[Any], Any]:
        """The request as the SDK's contents and config (live, or a line of a batch)."""
        types = self._types
        system = (
            "\n".join(
                "".join(getattr(p, "text", "") for p in m.parts)
                for m in request.messages
                if m.role == "system"
            )
            or None
        )
        contents = []
        for message in request.messages:
            if message.role == "system":
                continue
            if message.videos:  # refused at start-up (settings.caller.check_video_backbones)
                raise ModelConfigError("the gemini provider takes no data:video/jpeg parts")
            parts = [
                types.Part.from_bytes(data=p.jpeg, mime_type="image/jpeg")
                if isinstance(p, ImagePart)
                else types.Part.from_text(text=getattr(p, "text", ""))
                for p in message.parts
            ]
            contents.append(
                types.Content(role="model" if message.role == "assistant" else "user", parts=parts)
            )
        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=request.temperature,
            max_output_tokens=request.max_output_tokens,
            response_mime_type="application/json" if request.json_schema else None,
            response_json_schema=request.json_schema,
        )
        return contents, config

    async def complete(self, request: ModelRequest) -> ModelReply:
        errors = self._errors
        contents, config = self.prompt(request)
        try:
            response = await self._client.aio.models.generate_content(
                model=self.model, contents=contents, config=config
            )
        except errors.APIError as exc:
            missing = ModelConfigError(f"model {self.model!r} not found")
            raise api_error(exc, self.model, "Gemini API", not_found=missing) from exc
        except (TimeoutError, ConnectionError, OSError) as exc:
            raise TransientModelError(f"cannot reach the Gemini endpoint: {exc}") from exc
        except MALFORMED_BODY_ERRORS as exc:
            raise TransientModelError(
                f"malformed response body from the Gemini endpoint ({type(exc).__name__})"
            ) from exc
        except Exception as exc:
            if is_transport_error(exc):
                raise TransientModelError(f"cannot reach the Gemini endpoint: {exc}") from exc
            raise
        return reply_of(response)


def api_error(
    exc: Any, where: str, service: str, *, not_found: Exception | None = None
) -> Exception:
    """gaze's error for the SDK's ``APIError``: its HTTP code by the one rule
    (``gaze.models.protocol.status_error``)."""
    return status_error(
        getattr(exc, "code", 0) or 0,
        where,
        service,
        str(exc.message or exc),
        retry_after=retry_after_header(exc),
        not_found=not_found,
    )


def is_transport_error(exc: BaseException) -> bool:
    """An httpx, httpcore or aiohttp error: the SDK lets them through under their own names."""
    return type(exc).__module__.startswith(("httpx", "httpcore", "aiohttp"))


def reply_of(response: Any) -> ModelReply:
    """A GenerateContentResponse (live, or one of a batch's) as a reply."""
    try:
        text = response.text
        usage = response.usage_metadata
    except MALFORMED_BODY_ERRORS as exc:
        raise TransientModelError(
            f"malformed response body from the Gemini endpoint ({type(exc).__name__})"
        ) from exc
    return ModelReply(
        text=text if isinstance(text, str) else "",
        input_tokens=as_count(getattr(usage, "prompt_token_count", 0)),
        output_tokens=as_count(getattr(usage, "candidates_token_count", 0)),
        cached_tokens=as_count(getattr(usage, "cached_content_token_count", 0)),
    )
