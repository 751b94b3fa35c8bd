"""Replies of unbounded size: refused past the limit, never fed back, never cached."""

from __future__ import annotations

import asyncio
import json

from pydantic import BaseModel, ConfigDict

from gaze.models.cache import ResponseCache
from gaze.models.caller import Caller, RetryPolicy
from gaze.models.protocol import Message
from gaze.models.providers.openai_chat import OpenAIChat
from gaze.models.structured import ask
from tests.standin import StandIn, chat_reply


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str


def test_an_oversized_reply_is_refused_not_fed_back_and_not_cached(tmp_path):
    huge = json.dumps({"label": "x" * 3_000_000})  # valid JSON, 3 MB
    with StandIn() as server:
        server.push(chat_reply(huge), chat_reply('{"label": "ok"}'))
        caller = Caller(
            {"default": OpenAIChat("m", base_url=server.url + "/v1")},
            cache=ResponseCache(tmp_path),
            retry=RetryPolicy(initial_s=0.01),
        )
        result = asyncio.run(ask(caller, "observer", [Message.text("user", "x")], Answer))
        retry_size = len(json.dumps(server.seen[1].body))
    assert result.value == Answer(label="ok")
    assert [r["ok"] for r in result.records] == [False, True]
    assert retry_size < 10_000  # the 3 MB reply did not travel back
    caller.cache.close()
    assert sum(p.stat().st_size for p in tmp_path.iterdir()) < 1_000_000


def test_every_reply_over_the_limit_fails_the_call_with_the_reason():
    with StandIn(default=chat_reply(json.dumps({"label": "y" * 400_000}))) as server:
        caller = Caller(
            {"default": OpenAIChat("m", base_url=server.url + "/v1")},
            retry=RetryPolicy(initial_s=0.01),
        )
        result = asyncio.run(
            ask(caller, "observer", [Message.text("user", "x")], Answer, max_retries=1)
        )
    assert result.value is None and "over the limit of 262,144" in result.error
