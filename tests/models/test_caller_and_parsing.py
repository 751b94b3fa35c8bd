"""The caller (cache, retries, concurrency) and structured parsing, with the scripted backbone."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel, ConfigDict

from gaze.errors import GazeInputError
from gaze.models.cache import ResponseCache, cache_key, public_endpoint
from gaze.models.caller import Caller, RetryPolicy, usage_totals
from gaze.models.prices import Pricing
from gaze.models.protocol import (
    ImagePart,
    Message,
    ModelRequest,
    NoReplyError,
    TransientModelError,
)
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


def test_strict_schema_is_built_once_per_model_and_each_caller_gets_its_own_copy(monkeypatch):
    class Once(BaseModel):
        n: int

    built = []
    original = Once.model_json_schema.__func__

    def counted(cls, *args, **kwargs):
        built.append(cls)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(Once, "model_json_schema", classmethod(counted))
    first = strict_schema(Once)
    first["properties"]["n"]["type"] = "string"  # a provider that changes what it is given
    assert strict_schema(Once)["properties"]["n"]["type"] == "integer"
    assert built == [Once]


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


def _ask(caller: Caller, role: str = "observer", max_retries: int = 3):
    return asyncio.run(
        ask(caller, role, [Message.text("system", "go")], Pair, max_retries=max_retries)
    )


def test_transient_errors_are_retried_and_every_attempt_is_counted():
    backbone = ScriptedBackbone(
        {
            "observer": [
                TransientModelError("429", retry_after=0.0),
                TransientModelError("reset"),
                '{"a": 1, "b": []}',
            ]
        }
    )
    result = _ask(Caller({"default": backbone}, retry=RetryPolicy(initial_s=0.001)))
    assert result.value == Pair(a=1, b=[])
    assert [r["ok"] for r in result.records] == [False, False, True]
    totals = usage_totals(result.records, Pricing({}))
    assert totals["calls"] == {"observer": 3} and totals["failed_requests"] == 2


def test_one_budget_per_call_for_transport_and_parse_errors():
    replies = [TransientModelError("503"), "not json", TransientModelError("503"), "{}"] * 3
    backbone = ScriptedBackbone({"observer": replies})
    result = _ask(Caller({"default": backbone}, retry=RetryPolicy(initial_s=0.001)), max_retries=3)
    assert result.value is None and len(backbone.requests) == 4  # 1 + max_retries, in all
    assert len(result.records) == 4


def test_a_call_with_no_reply_at_all_raises_instead_of_reporting_nothing():
    backbone = ScriptedBackbone({"observer": [TransientModelError("connection refused")] * 9})
    caller = Caller({"default": backbone}, retry=RetryPolicy(initial_s=0.001))
    with pytest.raises(NoReplyError, match="no reply .* after 3 attempts"):
        _ask(caller, max_retries=2)
    assert len(backbone.requests) == 3


def test_backoff_honours_retry_after_up_to_its_cap_and_grows_otherwise():
    import random

    policy, rng = RetryPolicy(initial_s=1.0, max_s=8.0), random.Random(0)
    assert policy.pause(1, TransientModelError("x", retry_after=3.0), rng) == 3.0
    assert policy.pause(1, TransientModelError("x", retry_after=9999.0), rng) == 8.0
    assert 0.5 <= policy.pause(1, TransientModelError("x"), rng) <= 1.0
    assert 4.0 <= policy.pause(4, TransientModelError("x"), rng) <= 8.0


def test_concurrency_limit_is_respected():
    in_flight, peak = 0, 0

    class Backbone(ScriptedBackbone):
        async def complete(self, req):
            from gaze.models.protocol import ModelReply

            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.02)
            in_flight -= 1
            return ModelReply('{"a": 1, "b": []}')

    caller = Caller({"default": Backbone()}, concurrency=3)

    async def many():
        await asyncio.gather(
            *(ask(caller, "observer", [Message.text("system", str(i))], Pair) for i in range(10))
        )

    asyncio.run(many())
    assert peak == 3


def test_cache_key_covers_content_not_secrets():
    base = cache_key("openai", "m", public_endpoint("http://user:pw@host:8000/v1?key=s"), request())
    assert public_endpoint("http://user:pw@host:8000/v1?key=s") == "http://host:8000/v1"
    assert base != cache_key("openai", "m", "", request(text="other"))
    assert base != cache_key("openai", "m", "", request(image=b"\xff\xd8y"))
    assert base != cache_key("openai", "m2", "", request())


def test_only_validated_replies_are_cached(tmp_path):
    backbone = ScriptedBackbone({"observer": ["garbage", '{"a": 1, "b": []}']})
    first = _ask(Caller({"default": backbone}, cache=ResponseCache(tmp_path)), max_retries=0)
    assert first.value is None  # the bad reply is not kept ...
    again = _ask(Caller({"default": backbone}, cache=ResponseCache(tmp_path)), max_retries=0)
    assert again.value == Pair(a=1, b=[]) and len(backbone.requests) == 2  # ... so it is asked
    third = _ask(Caller({"default": backbone}, cache=ResponseCache(tmp_path)), max_retries=0)
    assert third.value == Pair(a=1, b=[]) and third.records[0]["cache_hit"]
    assert len(backbone.requests) == 2  # the good one is


def test_start_up_check_runs_once_and_only_before_a_real_request(tmp_path):
    checked: list[str] = []

    async def check(backbone, where):
        checked.append(where)

    backbone = ScriptedBackbone({"observer": ['{"a": 1, "b": []}']})
    _ask(Caller({"default": backbone}, cache=ResponseCache(tmp_path), check=check))
    assert checked == ["scripted:script (observer)"]
    checked.clear()
    _ask(Caller({"default": backbone}, cache=ResponseCache(tmp_path), check=check))
    assert checked == []  # answered from the cache: no server needed


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
    bindings = bind_roles("scripted:auto", {"critic": "scripted:auto"}, None).backbones
    assert bindings["critic"] is bindings["default"]  # one backbone per distinct name
    with pytest.raises(GazeInputError, match=r"base_url=URL \(repeatable\) and key_env"):
        parse_role_bindings(["critic=scripted:auto,port=3"])
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


def test_a_reply_that_validated_on_retry_answers_the_rerun_of_the_whole_call(tmp_path):
    backbone = ScriptedBackbone({"observer": ["garbage", '{"a": 1, "b": []}']})
    first = _ask(Caller({"default": backbone}, cache=ResponseCache(tmp_path)))
    assert first.value == Pair(a=1, b=[]) and len(backbone.requests) == 2
    again = ScriptedBackbone({"observer": ["garbage"] * 4})  # would fail if it were asked
    rerun = _ask(Caller({"default": again}, cache=ResponseCache(tmp_path)))
    assert rerun.value == Pair(a=1, b=[]) and again.requests == []
    assert [r["cache_hit"] for r in rerun.records] == [True]


def test_one_caller_serves_one_loop_after_another_and_closes_with_async_with(tmp_path):
    """Its limits and checks belong to the loop in use: a script that calls ``asyncio.run`` per
    clip with one caller once failed on the second ("bound to a different event loop")."""
    replies = [f'{{"a": {k}, "b": []}}' for k in range(4)]
    backbone = ScriptedBackbone({"observer": replies}, latency_s=0.05)
    cache = ResponseCache(tmp_path / "cache")
    caller = Caller({"default": backbone}, concurrency=1, cache=cache)

    async def one(text: str) -> Pair | None:
        return (await ask(caller, "observer", [Message.text("system", text)], Pair)).value

    async def two_at_once(name: str) -> list[int]:
        # the limit of one request in flight is taken, and waited on, on this loop
        found = await asyncio.gather(one(f"{name} x"), one(f"{name} y"))
        return sorted(p.a for p in found if p is not None)

    assert asyncio.run(two_at_once("first")) == [0, 1]
    assert asyncio.run(two_at_once("second")) == [2, 3]
    assert cache._db is not None

    async def closed() -> None:
        async with Caller({"default": backbone}, cache=cache) as scoped:
            assert scoped.cache is cache

    asyncio.run(closed())
    assert cache._db is None  # closed by the block
