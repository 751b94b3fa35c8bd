"""Model names (``provider:model``), role bindings (each role may have its own endpoint and
key variable), and the start-up check of a backbone."""

from __future__ import annotations

import asyncio
import base64
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from gaze.errors import GazeInputError
from gaze.models import defaults
from gaze.models.cache import public_endpoint
from gaze.models.caller import RetryPolicy
from gaze.models.pool import Endpoint, EndpointPool, parse_endpoints
from gaze.models.protocol import (
    ROLES,
    Backbone,
    EndpointUnreachableError,
    ImagePart,
    Message,
    ModelCallError,
    ModelConfigError,
    ModelRequest,
    TextPart,
    TransientModelError,
    VideoPart,
)
from gaze.redact import public_url, redact, register_key_variable

PROVIDERS = ("openai", "gemini", "vllm", "scripted", "langchain")


def parse_spec(spec: str) -> tuple[str, str]:
    provider, sep, model = spec.partition(":")
    if not sep or not provider or not model:
        raise GazeInputError(f"model {spec!r} must be named PROVIDER:MODEL (e.g. openai:gpt-4o)")
    if provider not in PROVIDERS:
        raise GazeInputError(
            f"unknown provider {provider!r} in {spec!r}; known: {', '.join(PROVIDERS)}"
        )
    return provider, model


@dataclass(frozen=True)
class RoleSpec:
    """A role's backbone as written: ``PROVIDER:MODEL[,base_url=URL][,key_env=VARIABLE]``."""

    model: str
    base_url: str | None = None
    key_env: str | None = None

    @staticmethod
    def parse(text: str) -> RoleSpec:
        """``base_url`` may be repeated: the role's requests are spread over those endpoints."""
        model, *options = text.split(",")
        parse_spec(model)
        found: dict[str, list[str]] = {"base_url": [], "key_env": []}
        for option in options:
            name, sep, value = option.partition("=")
            if not sep or name not in found or not value:
                raise GazeInputError(
                    f"{text!r}: options after the model are base_url=URL (repeatable) and "
                    "key_env=VARIABLE"
                )
            found[name].append(value)
        if len(found["key_env"]) > 1:
            raise GazeInputError(f"{text!r}: one key_env per role")
        urls = " ".join(found["base_url"]) or None
        return RoleSpec(model, urls, found["key_env"][0] if found["key_env"] else None)


def make_backbone(
    spec: str,
    base_url: str | None = None,
    key_env: str | None = None,
    image_detail: str = "auto",
    max_images: int = defaults.MAX_FRAMES_PER_CALL,
    timeout_s: float | None = None,
) -> Backbone:
    """``max_images``: the most images one request of the run carries (an in-process engine
    is built to accept them). ``timeout_s``: the run's request deadline, given to the SDK
    client too (its own default would otherwise cut a longer deadline short)."""
    deadline = {} if timeout_s is None else {"timeout_s": timeout_s}
    provider, model = parse_spec(spec)
    if key_env is not None:
        if not os.environ.get(key_env):
            raise ModelConfigError(f"{spec}: the key variable {key_env} is not set")
        register_key_variable(key_env)
    if provider == "openai":
        from gaze.models.providers.openai_chat import OpenAIChat

        return OpenAIChat(
            model, base_url=base_url, key_env=key_env, image_detail=image_detail, **deadline
        )
    if provider == "gemini":
        from gaze.models.providers.gemini import GeminiChat

        return GeminiChat(model, base_url=base_url, key_env=key_env, **deadline)
    if provider == "vllm":
        from gaze.models.providers.vllm_engine import VLLMEngine

        return VLLMEngine(model, max_images=max_images)
    if provider == "scripted":
        from gaze.models.scripted import scripted_from_spec

        return scripted_from_spec(model)
    raise GazeInputError("langchain models are objects: pass them from Python (backbones={...})")


def parse_role_bindings(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["critic=openai:x", ...]`` -> {"critic": "openai:x"} (roles checked, specs parsed)."""
    out: dict[str, str] = {}
    for pair in pairs:
        role, sep, spec = pair.partition("=")
        if not sep or role not in ROLES:
            raise GazeInputError(
                f"--role {pair!r}: expected ROLE=PROVIDER:MODEL with ROLE one of {', '.join(ROLES)}"
            )
        RoleSpec.parse(spec)
        out[role] = spec
    return out


def check_base_url(url: str | None, where: str = "--base-url") -> None:
    """A base URL gaze can use: http(s), a host, a port in range (else one line, exit 2)."""
    if not url:
        return
    if len(url.split()) > 1:
        for one in url.split():
            check_base_url(one, where)
        return
    try:
        parts = urlsplit(url)
        port = parts.port  # raises for 99999 or a broken IPv6 literal
    except ValueError as exc:
        raise GazeInputError(f"{where} {redact(url)} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GazeInputError(f"{where} {redact(url)} must be an http(s) URL with a host")
    del port


@dataclass
class Bindings:
    """Backbones by role ('default' for every role not bound) and each role's endpoint."""

    backbones: dict[str, Backbone]
    endpoints: dict[str, str]


def bind_roles(
    default: str | None,
    roles: Mapping[str, str],
    base_url: str | None,
    given: Mapping[str, Backbone] | None = None,
    image_detail: str = "auto",
    endpoint_concurrency: int = 0,
    max_images: int = defaults.MAX_FRAMES_PER_CALL,
    timeout_s: float | None = None,
) -> Bindings:
    """One backbone per distinct model and endpoint -- a pool (``gaze.models.pool``) where
    several endpoints serve it; ``given`` objects (from Python) win."""
    given = dict(given or {})
    if default is None and "default" not in given:
        raise GazeInputError("no model configured")
    built: dict[RoleSpec, Backbone] = {}
    listed: dict[str, list[tuple[str, int]]] = {}

    def endpoints_of(spec: RoleSpec) -> list[tuple[str, int]]:
        """The endpoints a spec names (a pool file is read once)."""
        if not spec.base_url:
            return []
        if spec.base_url not in listed:
            listed[spec.base_url] = parse_endpoints(spec.base_url, endpoint_concurrency)
        return listed[spec.base_url]

    def urls_of(spec: RoleSpec) -> str | None:
        return " ".join(url for url, _ in endpoints_of(spec)) or None

    def backbone_for(spec: RoleSpec) -> Backbone:
        if spec not in built:
            built[spec] = _build(
                spec, endpoints_of(spec), image_detail, endpoint_concurrency, max_images, timeout_s
            )
        return built[spec]

    default_spec = RoleSpec(default or "", base_url)
    check_base_url(urls_of(default_spec), "--base-url")
    backbones: dict[str, Backbone] = {"default": given.get("default") or backbone_for(default_spec)}
    endpoints = {"default": public_endpoint(urls_of(default_spec))}
    for role in ROLES:
        if role in given:
            backbones[role] = given[role]
        elif role in roles:
            spec = RoleSpec.parse(roles[role])
            check_base_url(urls_of(spec), f"--role {role}: base_url")
            if spec.base_url is None:
                spec = RoleSpec(spec.model, base_url, spec.key_env)
            backbones[role] = backbone_for(spec)
            endpoints[role] = public_endpoint(urls_of(spec))
    return Bindings(backbones, endpoints)


def _build(
    spec: RoleSpec,
    listed: list[tuple[str, int]],
    image_detail: str,
    endpoint_concurrency: int,
    max_images: int,
    timeout_s: float | None,
) -> Backbone:
    """One backbone for the spec's endpoint, or a pool over its several endpoints (or over
    one endpoint given its own concurrency limit)."""
    if len(listed) <= 1 and not endpoint_concurrency:
        url = listed[0][0] if listed else None
        return make_backbone(spec.model, url, spec.key_env, image_detail, max_images, timeout_s)
    if parse_spec(spec.model)[0] not in ("openai", "gemini"):
        raise GazeInputError(f"{spec.model}: several endpoints need the openai or gemini provider")
    endpoints: list[tuple[str | None, int]] = [*listed] or [(None, endpoint_concurrency)]
    members = [
        Endpoint(
            make_backbone(spec.model, url, spec.key_env, image_detail, timeout_s=timeout_s),
            public_url(url) if url else "default",
            limit,
        )
        for url, limit in endpoints
    ]
    return EndpointPool(members)


PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


PROBE_JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAUDBAQEAwUEBAQFBQUGBwwIBwcHBw8LCwkMEQ8SEhEPERETFhwXExQa"
    "FRERGCEYGh0dHx8fExciJCIeJBweHx7/2wBDAQUFBQcGBw4ICA4eFBEUHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4e"
    "Hh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh7/wAARCAAQABADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAA"
    "AAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAk"
    "M2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKT"
    "lJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QA"
    "HwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdh"
    "cRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hp"
    "anN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk"
    "5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwAooooA/9k="
)
"""A 16x16 grey JPEG (OpenCV's encoding of level 128 at quality 85): the smallest image every
vision endpoint accepts. Kept as bytes: the start-up check goes out beside a run's first
request, before anything has loaded OpenCV."""


async def preflight(
    backbone: Backbone,
    where: str,
    *,
    attempts: int = 4,
    retry: RetryPolicy | None = None,
    timeout_s: float = defaults.REQUEST_TIMEOUT_S,
    images: int = 1,
    videos: int = 0,
    refused: str = "",
) -> None:
    """One tiny call with ``images`` images (or ``videos`` videos of two frames) and a JSON
    schema, so an unusable backbone fails before any clip work: unreachable server, rejected
    key, unknown model, no image or schema support (or, with ``refused``, fewer images or
    videos per prompt than gaze sends). Transient errors get the same budget and backoff as
    every other call."""
    if backbone.provider == "scripted":
        return
    policy = retry or RetryPolicy()
    rng = random.Random(0)
    jpeg = PROBE_JPEG
    request = ModelRequest(
        role="preflight",
        messages=(
            Message(
                "user",
                (
                    *(ImagePart(jpeg) for _ in range(images if not videos else 0)),
                    *(VideoPart((ImagePart(jpeg),) * 2) for _ in range(videos)),
                    TextPart('Reply with the JSON object {"ok": true}.'),
                ),
            ),
        ),
        schema_name="Probe",
        json_schema=PROBE_SCHEMA,
        max_output_tokens=16,
    )
    for attempt in range(1, max(1, attempts) + 1):
        try:
            await asyncio.wait_for(backbone.complete(request), timeout=timeout_s)
            return
        except TimeoutError:
            if attempt >= attempts:
                raise EndpointUnreachableError(
                    f"{where}: no complete reply within {timeout_s:g} s"
                ) from None
            continue
        except ModelConfigError:
            raise
        except TransientModelError as exc:
            if attempt >= attempts:
                raise EndpointUnreachableError(f"{where}: {exc}") from exc
            await asyncio.sleep(policy.pause(attempt, exc, rng))
        except ModelCallError as exc:
            if refused:
                raise ModelConfigError(f"{where}: {refused} ({exc})") from exc
            raise ModelConfigError(
                f"{where} rejected a request with an image and a JSON schema ({exc}); "
                "gaze needs a vision model with structured output"
            ) from exc
