"""Model names (``provider:model``), role bindings, and the pre-flight check of a backbone."""

from __future__ import annotations

from collections.abc import Mapping

from gaze.errors import GazeInputError
from gaze.models.protocol import (
    ROLES,
    Backbone,
    ImagePart,
    Message,
    ModelCallError,
    ModelConfigError,
    ModelRequest,
    TextPart,
    TransientModelError,
)

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


def make_backbone(spec: str, base_url: str | None = None) -> Backbone:
    provider, model = parse_spec(spec)
    if provider == "openai":
        from gaze.models.providers.openai_chat import OpenAIChat

        return OpenAIChat(model, base_url=base_url)
    if provider == "gemini":
        from gaze.models.providers.gemini import GeminiChat

        return GeminiChat(model, base_url=base_url)
    if provider == "vllm":
        from gaze.models.providers.vllm_engine import VLLMEngine

        return VLLMEngine(model)
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
        parse_spec(spec)
        out[role] = spec
    return out


def bind_roles(
    default: str | None,
    roles: Mapping[str, str],
    base_url: str | None,
    given: Mapping[str, Backbone] | None = None,
) -> dict[str, Backbone]:
    """One backbone per distinct model name; ``given`` objects (from Python) win."""
    given = dict(given or {})
    if default is None and "default" not in given:
        raise GazeInputError("no model configured")
    built: dict[str, Backbone] = {}

    def backbone_for(spec: str) -> Backbone:
        if spec not in built:
            built[spec] = make_backbone(spec, base_url)
        return built[spec]

    bindings: dict[str, Backbone] = {"default": given.get("default") or backbone_for(default or "")}
    for role in ROLES:
        if role in given:
            bindings[role] = given[role]
        elif role in roles:
            bindings[role] = backbone_for(roles[role])
    return bindings


PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


def probe_jpeg() -> bytes:
    """A 16x16 grey JPEG: the smallest image every vision endpoint accepts."""
    import numpy as np

    from gaze.video.frames import encode_jpeg

    return encode_jpeg(np.full((16, 16, 3), 128, np.uint8))


async def preflight(backbone: Backbone, where: str) -> None:
    """One tiny call with an image and a JSON schema, so an unusable backbone fails before any
    clip work: unreachable server, rejected key, unknown model, no image or schema support."""
    if backbone.provider == "scripted":
        return
    request = ModelRequest(
        role="preflight",
        messages=(
            Message(
                "user",
                (ImagePart(probe_jpeg()), TextPart('Reply with the JSON object {"ok": true}.')),
            ),
        ),
        schema_name="Probe",
        json_schema=PROBE_SCHEMA,
        max_output_tokens=16,
    )
    try:
        await backbone.complete(request)
    except ModelConfigError:
        raise
    except TransientModelError as exc:
        raise ModelConfigError(f"{where}: {exc}") from exc
    except ModelCallError as exc:
        raise ModelConfigError(
            f"{where} rejected a request with an image and a JSON schema ({exc}); "
            "gaze needs a vision model with structured output"
        ) from exc
