"""The scripted backbone: ships in the package, replays given outputs, records every request.

It is the test model (no weights anywhere), the stand-in for latency benchmarks, and what
``--model scripted:auto`` or ``scripted:FILE.json`` selects for a dry run of the whole graph.
Replies per role come from a list (in call order) or from a function of the request; an
exception instance in the list is raised instead (to exercise retries).
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gaze.errors import GazeInputError
from gaze.models.protocol import Backbone, ModelReply, ModelRequest

Reply = str | dict[str, Any] | BaseModel | Exception | Callable[[ModelRequest], Any]
Script = Mapping[str, Sequence[Reply] | Callable[[ModelRequest], Any]]


class ScriptExhausted(RuntimeError):
    """A role was called more often than its script has replies (and no fallback was allowed)."""


def minimal_instance(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """The smallest value valid against a (strict) JSON schema: empty lists, first enum value,
    lower bounds, empty strings."""
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].split("/")[-1]
        return minimal_instance(root.get("$defs", {})[name], root)
    if "anyOf" in schema:
        options = [s for s in schema["anyOf"] if s.get("type") != "null"]
        return None if len(options) < len(schema["anyOf"]) else minimal_instance(options[0], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {k: minimal_instance(v, root) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        count = schema.get("minItems", 0)
        return [minimal_instance(schema.get("items", {}), root) for _ in range(count)]
    if kind in ("integer", "number"):
        return schema.get("minimum", schema.get("exclusiveMinimum", 0))
    if kind == "boolean":
        return False
    if kind == "string":
        return "x" * schema.get("minLength", 0)
    return None


class ScriptedBackbone:
    """Replays outputs per role; ``requests`` keeps every request received, in order."""

    provider = "scripted"
    native_json_schema = True

    def __init__(
        self,
        script: Script | Callable[[ModelRequest], Any] | None = None,
        *,
        model: str = "script",
        latency_s: float = 0.0,
        fallback_minimal: bool = False,
        keep_requests: bool = True,
    ) -> None:
        self.model = model
        self.keep_requests = keep_requests
        """Tests read ``requests``; a dry run from the command line keeps none (they hold every
        image sent, which a long clip would pile up)."""
        self.latency_s = latency_s
        self.fallback_minimal = fallback_minimal
        self.requests: list[ModelRequest] = []
        self._function = script if callable(script) else None
        self._queues: dict[str, deque[Reply]] = defaultdict(deque)
        self._functions: dict[str, Callable[[ModelRequest], Any]] = {}
        if isinstance(script, Mapping):
            for role, replies in script.items():
                if callable(replies):
                    self._functions[role] = replies
                else:
                    self._queues[role].extend(replies)

    def calls(self, role: str | None = None) -> list[ModelRequest]:
        return [r for r in self.requests if role is None or r.role == role]

    def _next(self, request: ModelRequest) -> Any:
        if self._function is not None:
            return self._function(request)
        if request.role in self._functions:
            return self._functions[request.role](request)
        queue = self._queues.get(request.role)
        if queue:
            return queue.popleft()
        if self.fallback_minimal and request.json_schema is not None:
            return minimal_instance(request.json_schema)
        raise ScriptExhausted(f"no scripted reply left for role {request.role!r}")

    async def complete(self, request: ModelRequest) -> ModelReply:
        if self.keep_requests:
            self.requests.append(request)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        reply = self._next(request)
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, BaseModel):
            text = reply.model_dump_json()
        elif isinstance(reply, str):
            text = reply
        else:
            text = json.dumps(reply)
        return ModelReply(
            text=text,
            input_tokens=sum(
                len(getattr(p, "text", "")) // 4 for m in request.messages for p in m.parts
            ),
            output_tokens=len(text) // 4,
        )


def scripted_from_spec(name: str) -> Backbone:
    """``scripted:auto`` (minimal valid replies), ``scripted:unruly`` (replies as real models
    spoil them: ``gaze.models.unruly``) or ``scripted:FILE.json`` ({role: [replies]})."""
    if name == "auto":
        return ScriptedBackbone(model="auto", fallback_minimal=True, keep_requests=False)
    if name == "unruly":
        from gaze.models.unruly import UnrulyBackbone

        return UnrulyBackbone()
    path = Path(name)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise GazeInputError(f"scripted model: cannot read script {path}: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise GazeInputError(f"scripted model: {path} must map each role to a list of replies")
    return ScriptedBackbone(data, model=path.name, fallback_minimal=True, keep_requests=False)
