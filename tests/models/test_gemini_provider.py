"""The real google-genai SDK against a stand-in server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64

import pytest

from gaze.models.caller import Caller, RetryPolicy
from gaze.models.protocol import ModelConfigError
from gaze.models.providers.gemini import GeminiChat
from gaze.models.structured import ask, strict_schema
from tests.models.test_openai_provider import JPEG, Answer, _messages
from tests.standin import StandIn, error_reply, gemini_reply


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "gm-secret")


def _caller(server: StandIn) -> Caller:
    return Caller(
        {"default": GeminiChat("gemini-test", base_url=server.url)},
        retry=RetryPolicy(initial_s=0.01),
    )


def test_request_body_carries_inline_images_and_the_json_schema():
    with StandIn() as server:
        server.push(gemini_reply('{"label": "ok", "score": 2}'))
        result = asyncio.run(ask(_caller(server), "observer", _messages(), Answer))
    assert result.value == Answer(label="ok", score=2)
    (seen,) = server.seen
    assert seen.path == "/v1/models/gemini-test:generateContent"
    assert seen.headers["x-goog-api-key"] == "gm-secret"
    body = seen.body
    assert body["systemInstruction"]["parts"] == [{"text": "You label frames."}]
    (content,) = body["contents"]
    assert content["role"] == "user"
    assert content["parts"][0] == {"text": "t=0.00s"}
    inline = content["parts"][1]["inlineData"]
    assert inline.get("mimeType", inline.get("mime_type")) == "image/jpeg"  # SDKs differ
    assert base64.urlsafe_b64decode(inline["data"]) == JPEG
    config = body["generationConfig"]
    assert config["temperature"] == 0.0
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == strict_schema(Answer)
    assert result.records[0]["input_tokens"] == 13 and result.records[0]["output_tokens"] == 5


def test_429_and_500_are_retried_then_answered():
    with StandIn() as server:
        server.push(
            error_reply(429, "quota"),
            error_reply(500, "oops"),
            gemini_reply('{"label": "b", "score": 1}'),
        )
        result = asyncio.run(ask(_caller(server), "router", _messages(), Answer))
    assert result.value == Answer(label="b", score=1)
    assert len(server.seen) == 3
    assert [r["ok"] for r in result.records] == [False, False, True]  # every attempt counted


def test_missing_gemini_key_is_an_input_error(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ModelConfigError, match="GEMINI_API_KEY"):
        GeminiChat("gemini-test")
