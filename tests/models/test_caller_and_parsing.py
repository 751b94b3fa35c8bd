"""The caller (cache, retries, concurrency) and structured parsing, with the scripted backbone."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, ConfigDict

from gaze.errors import GazeInputError
from gaze.models.cache import ResponseCache, cache_key, public_endpoint
from gaze.models.caller import Caller, RetryPolicy, _BackoffWait
from gaze.models.protocol import ImagePart, Message, ModelRequest, TransientModelError
from gaze.models.registry import bind_roles, make_backbone, parse_role_bindings, parse_spec
from gaze.models.scripted import ScriptedBackbone, ScriptExhausted, minimal_instance
from gaze.models.structured import ask, extract_json, strict_schema
from gaze.prompts.loader import parse_prompt


class Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int
    b: list[str]


def request(text: str = "hi", image: bytes = b"\xff\xd8x", role: str = "observer") -> ModelRequest:
    return ModelRequest(
        role=role,
        messages=(Message.text("system", text), Message("user", (ImagePart(image),))),
        schema_name="Pair",
        json_schema=strict_schema(Pair),
    )


@pytest.mark.parametrize(
    "text",
    ['{"a": 1, "b": []}', '```json\n{"a": 1, "b": []}\n```', 'Here: {"a": 1, "b": []} done.'],
)
def test_extract_json_finds_the_object(text):
    assert extract_json(text) == {"a": 1, "b": []}


def test_strict_schema_closes_objects_and_requires_everything():
    schema = strict_schema(Pair)
    assert schema["additionalProperties"] is False and schema["required"] == ["a", "b"]
    assert "title" not in schema
    assert minimal_instance(schema) == {"a": 0, "b": []}


def test_ask_feeds_validation_errors_back_and_succeeds():
    backbone = ScriptedBackbone({"observer": ['{"a": "x", "b": []}', '{"a": 2, "b": ["k"]}']})
    result = asyncio.run(
        ask(Caller({"default": backbone}), "observer", [Message.text("system", "go")], Pair)
    )
    assert result.value == Pair(a=2, b=["k"])
    second = backbone.requests[1].messages
    assert second[-2].parts[0].text == '{"a": "x", "b": []}'
    assert "a: Input should be a valid integer" in second[-1].parts[0].text


def test_schema_goes_into_the_prompt_when_the_provider_cannot_enforce_it():
    backbone = ScriptedBackbone({"observer": ['{"a": 1, "b": []}']})
    backbone.native_json_schema = False
    asyncio.run(
        ask(Caller({"default": backbone}), "observer", [Message.text("system", "go")], Pair)
    )
    assert "matching this JSON schema" in backbone.requests[0].messages[0].parts[-1].text


def test_transient_errors_are_retried_and_counted():
    backbone = ScriptedBackbone(
        {
            "observer": [
                TransientModelError("429", retry_after=0.0),
                TransientModelError("reset"),
                '{"a": 1, "b": []}',
            ]
        }
    )
    caller = Caller({"default": backbone}, retry=RetryPolicy(initial_s=0.001))
    reply, record = asyncio.run(caller.complete(request()))
    assert json.loads(reply.text) == {"a": 1, "b": []}
    assert record["attempts"] == 3 and record["images"] == 1 and not record["cache_hit"]


def test_backoff_honours_retry_after_and_grows_otherwise():
    import random

    class State:
        def __init__(self, error, attempt):
            self.attempt_number = attempt
            self.outcome = type("O", (), {"exception": lambda self: error})()

    wait = _BackoffWait(RetryPolicy(initial_s=1.0, max_s=8.0), random.Random(0))
    assert wait(State(TransientModelError("x", retry_after=3.0), 1)) == 3.0
    assert wait(State(TransientModelError("x", retry_after=99.0), 1)) == 8.0
    assert 0.5 <= wait(State(TransientModelError("x"), 1)) <= 1.0
    assert 4.0 <= wait(State(TransientModelError("x"), 4)) <= 8.0


def test_concurrency_limit_is_respected():
    in_flight, peak = 0, 0

    async def slow(req):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.02)
        in_flight -= 1
        return '{"a": 1, "b": []}'

    class Backbone(ScriptedBackbone):
        async def complete(self, req):
            from gaze.models.protocol import ModelReply

            return ModelReply(await slow(req))

    caller = Caller({"default": Backbone()}, concurrency=3)

    async def many():
        await asyncio.gather(*(caller.complete(request(text=str(i))) for i in range(10)))

    asyncio.run(many())
    assert peak == 3


def test_cache_key_covers_content_not_secrets(tmp_path):
    base = cache_key("openai", "m", public_endpoint("http://user:pw@host:8000/v1?key=s"), request())
    assert public_endpoint("http://user:pw@host:8000/v1?key=s") == "http://host:8000/v1"
    assert base != cache_key("openai", "m", "", request(text="other"))
    assert base != cache_key("openai", "m", "", request(image=b"\xff\xd8y"))
    assert base != cache_key("openai", "m2", "", request())
    cache = ResponseCache(tmp_path)
    backbone = ScriptedBackbone({"observer": ['{"a": 1, "b": []}']})
    caller = Caller({"default": backbone}, cache=cache)
    first, r1 = asyncio.run(caller.complete(request()))
    again, r2 = asyncio.run(caller.complete(request()))
    assert again.text == first.text and r2["cache_hit"] and len(backbone.requests) == 1


def test_scripted_backbone_records_and_refuses_to_invent():
    backbone = ScriptedBackbone({"router": ['{"a": 1, "b": []}']})
    asyncio.run(backbone.complete(request(role="router")))
    with pytest.raises(ScriptExhausted):
        asyncio.run(backbone.complete(request(role="router")))
    assert len(backbone.calls("router")) == 2


def test_model_names_and_role_bindings(tmp_path):
    assert parse_spec("openai:gpt-4o") == ("openai", "gpt-4o")
    for bad in ["gpt-4o", "openai:", "bogus:x"]:
        with pytest.raises(GazeInputError):
            parse_spec(bad)
    assert parse_role_bindings(["critic=scripted:auto"]) == {"critic": "scripted:auto"}
    with pytest.raises(GazeInputError, match="ROLE=PROVIDER:MODEL"):
        parse_role_bindings(["judge_of_all=scripted:auto"])
    bindings = bind_roles("scripted:auto", {"critic": "scripted:auto"}, None)
    assert bindings["critic"] is bindings["default"]  # one backbone per distinct name
    with pytest.raises(GazeInputError, match="langchain"):
        make_backbone("langchain:x")
    with pytest.raises(GazeInputError, match="vLLM|vllm"):
        make_backbone("vllm:some/model")
    script = tmp_path / "s.json"
    script.write_text('{"observer": [{"a": 1, "b": []}]}')
    assert make_backbone(f"scripted:{script}").model == "s.json"
    script.write_text("[1, 2]")
    with pytest.raises(GazeInputError, match="must map each role"):
        make_backbone(f"scripted:{script}")


def test_langchain_models_are_wrapped():
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from gaze.models.providers.langchain_chat import LangChainChat

    chat = LangChainChat(FakeListChatModel(responses=['{"a": 5, "b": ["z"]}']), name="fake")
    result = asyncio.run(
        ask(
            Caller({"default": chat}),
            "observer",
            [Message.text("system", "go"), Message("user", (ImagePart(b"\xff\xd8x"),))],
            Pair,
        )
    )
    assert result.value == Pair(a=5, b=["z"])
    messages = LangChainChat.to_messages(request())
    assert messages[1].content[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")


def test_prompt_files_declare_exactly_their_placeholders():
    good = parse_prompt("---\nid: x\nrole: r\nversion: 1\nplaceholders: a, b\n---\n{a} and {b}\n")
    assert good.render(a=1, b=2) == "1 and 2\n" and good.hash.startswith("sha256:")
    with pytest.raises(ValueError, match="body uses"):
        parse_prompt("---\nid: x\nrole: r\nversion: 1\nplaceholders: a\n---\n{a} {c}\n")
    with pytest.raises(KeyError, match="missing"):
        good.render(a=1)


def test_specialist_prompt_carries_the_codebook_from_the_file():
    from gaze.prompts.codebook_text import type_catalogue
    from gaze.schema.codebook import load_codebook

    text = type_catalogue("physical_plausibility")
    for ftype in load_codebook().codebook.dimension("physical_plausibility").types:
        assert ftype.definition in text and ftype.exclusion_rule in text
