"""Structured output: JSON schemas built from pydantic models, robust parsing, and retries that
feed the error back to the model."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from gaze.errors import first_error
from gaze.models import defaults, transcript
from gaze.models.caller import Caller, CallRecord
from gaze.models.protocol import (
    EndpointDownError,
    Message,
    ModelCallError,
    ModelReply,
    ModelRequest,
    NoReplyError,
    TextPart,
    TransientModelError,
)

T = TypeVar("T", bound=BaseModel)

RATE_LIMITED_WAITS = 8
"""429s one call may wait out without spending its retry budget: a rate limit is
back-pressure (the backbone's throttle sends fewer requests), not a failed attempt; past this
many a call treats further 429s as failed attempts, so a quota that never refills ends."""

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the strict form structured-output servers accept: every object
    closed (additionalProperties false) and every property required; no defaults or titles. A
    fresh copy each time (a provider may change the one it is given)."""
    loaded: dict[str, Any] = json.loads(_strict_schema_text(model))
    return loaded


@functools.cache
def _strict_schema_text(model: type[BaseModel]) -> str:
    """``strict_schema`` as compact JSON, made once per model class (every output model is made
    once: ``gaze.agents``). Pydantic builds a schema in about 5 ms of interpreter time, and
    every request asked for it again: three refusing 4-slot servers at 24 requests a second
    spent 9 % of the client's interpreter time there (``bench/fleet_throughput.py``, profiled)."""

    def tighten(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: tighten(v) for k, v in node.items() if k not in {"default", "title"}}
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
            return node
        if isinstance(node, list):
            return [tighten(v) for v in node]
        return node

    return json.dumps(tighten(model.model_json_schema()), separators=(",", ":"))


def extract_json(text: str) -> Any:
    """The JSON object in a reply: plain, fenced, or surrounded by prose."""
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ValueError("no JSON object found in the reply")


@dataclass
class Structured(Generic[T]):
    """The outcome of a structured call: the value (None if it never parsed) and every call."""

    value: T | None
    records: list[CallRecord] = field(default_factory=list)
    error: str = ""


def _schema_hint(output: type[BaseModel]) -> str:
    return "Reply with one JSON object only, matching this JSON schema:\n" + _strict_schema_text(
        output
    )


async def ask(
    caller: Caller,
    role: str,
    messages: list[Message],
    output: type[T],
    *,
    max_retries: int = defaults.MAX_RETRIES,
    temperature: float | None = None,
    sample: int = 0,
    parse: Callable[[str], Any] | None = None,
    label: str = "",
) -> Structured[T]:
    """Ask ``role``'s backbone until its reply validates as ``output``.

    One budget per call: at most ``1 + max_retries`` requests, whatever goes wrong (a transient
    error is retried after a backoff pause; a refusal or an invalid reply is retried with the
    error fed back). A reply that still does not validate gives ``value=None`` with the reason;
    a call that never got any reply (server down, timeouts) raises ``NoReplyError``: that is a
    failed clip, not a finding. Only a reply that validated is cached. Every attempt is noted
    in the clip's transcript (``gaze.models.transcript``), under ``label``.
    """
    backbone = caller.backbone(role)
    conversation = list(messages)
    if not backbone.native_json_schema:
        # the schema goes last (the per-call part), so the shared prefix stays shared
        conversation[-1] = Message(
            conversation[-1].role,
            (*conversation[-1].parts, TextPart("\n\n" + _schema_hint(output))),
        )
    result: Structured[T] = Structured(value=None)
    replied = False
    last_error: Exception | None = None
    attempts = 1 + max(0, max_retries)
    first: ModelRequest | None = None
    attempt = waits = 0
    while attempt < attempts:
        attempt += 1
        request = ModelRequest(
            role=role,
            messages=tuple(conversation),
            schema_name=output.__name__,
            json_schema=strict_schema(output),
            temperature=caller.temperature if temperature is None else temperature,
            sample=sample,
        )
        first = first or request
        hit = await caller.cached(request)
        if hit is not None:
            reply, record = hit
            result.records.append(record)
        else:
            record = caller.new_record(request)
            result.records.append(record)
            try:
                reply = await caller.send(request, record)
            except EndpointDownError:
                result.records.pop()  # nothing was sent
                raise
            except TransientModelError as exc:
                last_error = exc
                result.error = f"no reply: {exc}"
                transcript.note(request, record, label=label, attempt=attempt, error=result.error)
                if exc.rate_limited and waits < RATE_LIMITED_WAITS:
                    waits += 1
                    attempt -= 1  # waited out, not spent
                    await caller.pause(waits, exc)
                elif attempt < attempts:
                    await caller.pause(attempt, exc)
                continue
            except ModelCallError as exc:
                replied = True
                result.error = f"call failed: {exc}"
                transcript.note(request, record, label=label, attempt=attempt, error=result.error)
                break  # the server rejected this request: sending it again changes nothing
        replied = True
        problem, feedback = _refused(reply, caller.max_reply_chars)
        if not problem:
            try:
                result.value = (
                    parse(reply.text)
                    if parse is not None
                    else output.model_validate(extract_json(reply.text))
                )
            except (ValueError, ValidationError) as exc:
                problem = _short(exc)
                feedback = [
                    Message.text("assistant", reply.text),
                    Message.text(
                        "user",
                        f"That reply was not valid: {problem}. "
                        "Reply again with only the corrected JSON object.",
                    ),
                ]
        result.error = problem
        transcript.note(
            request,
            record,
            label=label,
            attempt=attempt,
            reply=reply.text,
            refusal=reply.refusal,
            error=problem,
            parsed=None if problem else _plain(result.value),
        )
        if problem:
            record["ok"] = False
            conversation += feedback
            continue
        if hit is None:
            await caller.remember(request, reply)
        if request is not first:
            # the call is known by its first request: a rerun asks that one, and must find the
            # reply that finally validated, not send the call (and its retries) again
            await caller.remember(first, reply)
        return result
    if not replied:
        caller.no_reply(role)
        raise NoReplyError(
            f"{role}: no reply from {caller.model_name(role)} after {attempts} attempts "
            f"({last_error})"
        )
    return result


def _refused(reply: ModelReply, max_chars: int) -> tuple[str, list[Message]]:
    """Why a reply is not even parsed (too long, a refusal), and what is fed back instead;
    empty for a reply to parse."""
    if len(reply.text) > max_chars:
        # never fed back (the retry would carry it) and never cached
        return (
            f"a reply of {len(reply.text):,} characters is over the limit of {max_chars:,} "
            "(max_reply_chars)",
            [
                Message.text("assistant", f"(a reply of {len(reply.text):,} characters)"),
                Message.text(
                    "user", "That reply was far too long. Reply again with only the JSON object."
                ),
            ],
        )
    if reply.refusal:
        return f"refused: {reply.refusal}", [
            Message.text("assistant", reply.text or reply.refusal),
            Message.text("user", "Please answer the request with the JSON object."),
        ]
    return "", []


def _plain(value: Any) -> Any:
    """A parsed answer as JSON (a custom ``parse`` may return a list or a number)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _short(exc: Exception) -> str:
    return first_error(exc) if isinstance(exc, ValidationError) else str(exc)
