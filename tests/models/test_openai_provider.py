"""The real openai SDK against a stand-in server on 127.0.0.1: exact request bodies, retries on
429/500/malformed output, and pre-flight errors."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from pydantic import BaseModel, ConfigDict

from gaze.models.caller import Caller, RetryPolicy
from gaze.models.protocol import ImagePart, Message, ModelConfigError, NoReplyError, TextPart
from gaze.models.providers.openai_chat import OpenAIChat, metrics_url, waiting_in
from gaze.models.registry import preflight
from gaze.models.structured import ask, strict_schema
from tests.fresh import python_output
from tests.standin import StandIn, chat_reply, error_reply

JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwc"
    "KDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAA"
    "AAAAAAAAD/2gAIAQEAAD8AKp//2Q=="
)


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str
    score: int


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _messages() -> list[Message]:
    return [
        Message.text("system", "You label frames."),
        Message("user", (TextPart("t=0.00s"), ImagePart(JPEG))),
    ]


def _caller(server: StandIn, **retry) -> Caller:
    backbone = OpenAIChat("vision-model", base_url=server.url + "/v1")
    return Caller({"default": backbone}, retry=RetryPolicy(initial_s=0.01, **retry))


def test_request_body_is_exactly_what_structured_output_servers_expect():
    with StandIn() as server:
        server.push(chat_reply('{"label": "ok", "score": 3}'))
        result = asyncio.run(ask(_caller(server), "observer", _messages(), Answer))
    assert result.value == Answer(label="ok", score=3)
    (seen,) = server.seen
    assert seen.method == "POST" and seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == "Bearer not-needed"
    body = seen.body
    assert body["model"] == "vision-model"
    assert body["temperature"] == 0.0
    assert body["messages"][0] == {"role": "system", "content": "You label frames."}
    assert body["messages"][1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "t=0.00s"},
            {
                "type": "image_url",
                "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(JPEG).decode()},
            },
        ],
    }
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Answer", "schema": strict_schema(Answer), "strict": True},
    }
    assert body["response_format"]["json_schema"]["schema"]["additionalProperties"] is False
    assert result.records[0]["input_tokens"] == 11 and result.records[0]["output_tokens"] == 7
    assert result.records[0]["images"] == 1


def test_429_500_and_malformed_output_are_retried():
    with StandIn() as server:
        server.push(
            error_reply(429, "slow down", {"retry-after": "0.05"}),
            error_reply(500, "boom"),
            chat_reply("Sure! here it is: {not json"),
            chat_reply('```json\n{"label": "cat", "score": 5}\n```'),
        )
        result = asyncio.run(ask(_caller(server), "critic", _messages(), Answer))
    assert result.value == Answer(label="cat", score=5)
    assert len(server.seen) == 4
    # the malformed reply and the complaint about it are fed back to the model
    last = server.seen[3].body["messages"]
    assert last[-2] == {"role": "assistant", "content": "Sure! here it is: {not json"}
    assert "not valid" in last[-1]["content"][0]["text"]
    assert [r["ok"] for r in result.records] == [False, False, False, True]


def test_output_that_never_validates_gives_up_after_the_retries():
    with StandIn() as server:
        server.push(*[chat_reply('{"label": "x"}') for _ in range(4)])
        result = asyncio.run(ask(_caller(server), "critic", _messages(), Answer, max_retries=3))
    assert result.value is None
    assert len(server.seen) == 4
    assert "score" in result.error


def test_transient_errors_stop_after_the_call_budget_and_fail_the_call():
    with (
        StandIn(default=error_reply(503, "down")) as server,
        pytest.raises(NoReplyError, match="server error 503"),
    ):
        asyncio.run(ask(_caller(server), "critic", _messages(), Answer, max_retries=2))
    assert len(server.seen) == 3  # 1 + max_retries requests, not retries x retries


def test_preflight_retries_transient_errors_with_the_same_policy():
    with StandIn() as server:
        server.push(error_reply(500, "warming up"), error_reply(429, "busy"))
        server.push(chat_reply('{"ok": true}'))
        backbone = OpenAIChat("m", base_url=server.url + "/v1")
        asyncio.run(preflight(backbone, "openai:m", retry=RetryPolicy(initial_s=0.01)))
    assert len(server.seen) == 3


def test_preflight_sends_a_small_grey_jpeg_with_the_json_schema():
    """The start-up check's image is kept as bytes (nothing loads OpenCV before a command's
    first request): it must still be a real 16x16 grey JPEG, as the server sees it."""
    import cv2
    import numpy as np

    with StandIn(default=chat_reply('{"ok": true}')) as server:
        backbone = OpenAIChat("m", base_url=server.url + "/v1")
        asyncio.run(preflight(backbone, "openai:m", images=2))
    body = server.seen[0].body
    assert len(server.seen) == 1
    urls = [p["image_url"]["url"] for p in body["messages"][0]["content"] if "image_url" in p]
    assert len(urls) == 2 and body["response_format"]["json_schema"]["name"] == "Probe"
    jpeg = base64.b64decode(urls[0].removeprefix("data:image/jpeg;base64,"))
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (16, 16, 3) and abs(float(image.mean()) - 128) < 2


@pytest.mark.parametrize(
    ("status", "message"),
    [(401, "rejected the API key"), (404, "not found"), (400, "image and a JSON schema")],
)
def test_preflight_turns_unusable_backbones_into_input_errors(status, message):
    with StandIn(default=error_reply(status, "nope")) as server:
        backbone = OpenAIChat("m", base_url=server.url + "/v1")
        with pytest.raises(ModelConfigError, match=message):
            asyncio.run(preflight(backbone, "openai:m"))
        assert server.seen[0].body["response_format"]["type"] == "json_schema"
        assert server.seen[0].body["messages"][0]["content"][0]["type"] == "image_url"


def test_preflight_names_an_unreachable_server():
    backbone = OpenAIChat("m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ModelConfigError, match="cannot reach http://127.0.0.1:9/v1"):
        asyncio.run(preflight(backbone, "openai:m"))


def test_missing_key_without_base_url_is_an_input_error():
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        OpenAIChat("gpt-4o")


def test_requests_carry_the_json_and_headers_the_sdks_create_sends(monkeypatch):
    """gaze sends through the client's ``post`` to skip ``create``'s body walk; the wire must
    not tell the difference: same path, same JSON, same headers (the key included)."""
    from gaze.models.protocol import ModelRequest
    from gaze.models.providers.openai_chat import request_body

    monkeypatch.setenv("OPENAI_API_KEY", "sk-compare")
    frames = tuple(p for t in range(3) for p in (TextPart(f"t={t}.00s"), ImagePart(JPEG)))
    request = ModelRequest(
        role="observer",
        messages=(Message.text("system", "You label frames."), Message("user", frames)),
        json_schema=strict_schema(Answer),
        schema_name="Answer",
    )
    with StandIn() as server:
        server.push(chat_reply('{"label": "ok", "score": 3}'), chat_reply('{"label": "ok"}'))
        backbone = OpenAIChat("vision-model", base_url=server.url + "/v1", image_detail="low")
        reply = asyncio.run(backbone.complete(request))
        body = request_body("vision-model", request, "low")
        asyncio.run(backbone._client.chat.completions.create(**body))
    ours, sdks = server.seen
    assert reply.text == '{"label": "ok", "score": 3}' and reply.input_tokens == 11
    assert ours.path == sdks.path == "/v1/chat/completions"
    assert ours.body == sdks.body and len(ours.raw) == len(sdks.raw)  # key order may differ
    assert ours.body["messages"][1]["content"][1]["image_url"]["detail"] == "low"
    assert ours.headers["authorization"] == "Bearer sk-compare"
    varying = {"x-stainless-read-timeout"}  # absent or equal; listed so a new header shows up
    assert {k: v for k, v in ours.headers.items() if k not in varying} == {
        k: v for k, v in sdks.headers.items() if k not in varying
    }


def test_the_request_bytes_are_the_sdks_own_serialisation_of_the_body():
    """``request_json`` puts each image's base64 in unscanned; the bytes must be exactly what
    the SDK writes for ``request_body`` (its ``openapi_dumps``), whatever the text holds:
    quotes, escapes, non-ASCII, a NUL, and text that looks like a media URL."""
    from openai._utils._json import openapi_dumps

    from gaze.models.protocol import ModelRequest, VideoPart
    from gaze.models.providers.openai_chat import request_body, request_json

    tricky = 'a "quote", a \\ backslash, é 中 \x00 and gaze-media-0123 data:image/jpeg;base64,'
    parts = (
        TextPart(tricky),
        ImagePart(JPEG),
        TextPart("t=1.00s"),
        ImagePart(JPEG[:-5] + b"\xff\xd9\x00\x01\x02"),
        VideoPart((ImagePart(JPEG), ImagePart(JPEG[::-1])), fps=2.5),
    )
    request = ModelRequest(
        role="observer",
        messages=(Message.text("system", tricky), Message("user", parts)),
        json_schema=strict_schema(Answer),
        schema_name="Answer",
    )
    for detail in ("auto", "low"):
        sent = request_json("vision-model", request, detail)
        assert sent == openapi_dumps(request_body("vision-model", request, detail))
        urls = [p["image_url"]["url"] for p in json.loads(sent)["messages"][1]["content"][1:4:2]]
        assert [base64.b64decode(u.split(",", 1)[1])[-3:] for u in urls] == [
            JPEG[-3:],
            b"\x00\x01\x02",
        ]


def test_an_sdk_that_takes_no_bytes_is_given_the_json_value(monkeypatch):
    """Older SDKs' ``post`` has no ``content``: the body goes as the JSON value, the same
    request on the wire."""
    from gaze.models.protocol import ModelRequest
    from gaze.models.providers.openai_chat import request_json

    request = ModelRequest(
        role="observer",
        messages=(Message("user", (TextPart("t=0.00s"), ImagePart(JPEG))),),
        json_schema=strict_schema(Answer),
        schema_name="Answer",
    )
    with StandIn() as server:
        server.push(chat_reply('{"label": "a"}'), chat_reply('{"label": "b"}'))
        backbone = OpenAIChat("vision-model", base_url=server.url + "/v1")
        assert backbone._sends_bytes
        asyncio.run(backbone.complete(request))
        backbone._sends_bytes = False
        asyncio.run(backbone.complete(request))
    as_bytes, as_value = server.seen
    assert as_bytes.raw == as_value.raw == request_json("vision-model", request)


def test_key_from_environment_is_sent_but_never_cached(tmp_path, monkeypatch):
    from gaze.models.cache import ResponseCache

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    with StandIn() as server:
        server.push(chat_reply('{"label": "ok", "score": 1}'))
        backbone = OpenAIChat("m", base_url=server.url + "/v1")
        cache = ResponseCache(tmp_path)
        caller = Caller({"default": backbone}, cache=cache)
        asyncio.run(ask(caller, "observer", _messages(), Answer))
        assert server.seen[0].headers["authorization"] == "Bearer sk-secret-123"
    cache.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"sk-secret-123" not in stored
    assert json.dumps({"label": "ok", "score": 1}).encode()[:10] in stored


def test_a_refusal_is_retried_like_malformed_output():
    refusal = chat_reply("")
    refusal.body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "refusal": "I cannot help with that.",
    }
    with StandIn() as server:
        server.push(refusal, chat_reply('{"label": "ok", "score": 4}'))
        result = asyncio.run(ask(_caller(server), "critic", _messages(), Answer))
    assert result.value == Answer(label="ok", score=4)
    assert len(server.seen) == 2
    assert server.seen[1].body["messages"][-2]["content"] == "I cannot help with that."


def test_an_openai_client_leaves_httpx_whole():
    """The SDK looks ``httpx`` up in ``sys.modules`` when it builds a client and parses replies,
    while other threads may be importing httpx (the graph through LangGraph, another clip's
    client): a look-up half-way through that import failed a grounding reply (CLI) and a whole
    clip (a Ray worker). In a fresh interpreter, building the provider imports httpx whole."""
    script = (
        "import sys\n"
        "from gaze.models.providers.openai_chat import OpenAIChat\n"
        "before = 'httpx' in sys.modules\n"
        "OpenAIChat('m', base_url='http://127.0.0.1:9/v1')\n"
        "module = sys.modules.get('httpx')\n"
        "print(before, hasattr(module, 'Response') and hasattr(module, 'URL'))\n"
    )
    assert python_output(script).split() == ["False", "True"]


def test_a_run_imports_httpx_after_its_first_request_and_before_the_graph_module(tmp_path):
    """``gaze.diagnose`` builds its clients with the import deferred (it delayed the first
    request by 20-40 ms) and makes it on the event loop's thread before the graph module, which
    imports httpx in a worker thread, starts loading. A fresh interpreter, as ``gaze diagnose``
    runs: the stand-in answers every call with the least valid output."""
    from pathlib import Path

    from gaze.bench.forge import forge_clip

    clip = tmp_path / "clip.mp4"
    forge_clip(clip, seed=1, failures=[], duration_s=4.0)
    script = f"""
import sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
import gaze.api
from gaze.models.providers import legacy_httpx
from gaze.models.providers.openai_chat import OpenAIChat
from gaze.settings.context import GazeContext
from tests.standin import StandIn, minimal_chat

with legacy_httpx.deferred():
    OpenAIChat("m", base_url="http://127.0.0.1:9/v1")
built_without = "httpx" not in sys.modules
seen = []
load_graph = gaze.api._load_graph

def watched():
    module = sys.modules.get("httpx")
    seen.append(hasattr(module, "Response") and hasattr(module, "URL"))
    return load_graph()

gaze.api._load_graph = watched
with StandIn(responder=minimal_chat) as server:
    context = GazeContext(model="openai:m", base_url=server.url + "/v1", use_cache=False)
    gaze.api.diagnose({str(clip)!r}, "put the block on the plate", context=context)
print(built_without, seen)
"""
    assert python_output(script).split() == ["True", "[True]"]


def test_a_vllm_servers_queue_is_read_from_its_metrics_page_beside_the_api():
    from tests.standin import queue_metrics

    def metrics(seen):
        return queue_metrics(7) if seen.path == "/metrics" else None

    with StandIn(router=metrics) as server:
        assert asyncio.run(OpenAIChat("m", base_url=server.url + "/v1").queue_waiting()) == 7
    with StandIn(error_reply(404, "no such page")) as server:  # not a vLLM server
        assert asyncio.run(OpenAIChat("m", base_url=server.url + "/v1").queue_waiting()) is None
    page = (
        "# HELP vllm:num_requests_waiting x\n"
        'vllm:num_requests_waiting{engine="0",model_name="a b"} 3.0\n'
        'vllm:num_requests_waiting{engine="1",model_name="a b"} 2.0 1712000000\n'
        "vllm:num_requests_waiting_by_reason 9\n"
    )
    assert waiting_in(page) == 5 and waiting_in("vllm:num_requests_running 4\n") is None
    assert metrics_url("http://gpu1:8000/v1/") == "http://gpu1:8000/metrics"
