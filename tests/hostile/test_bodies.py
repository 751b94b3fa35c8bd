"""Malformed HTTP bodies from a server that says 200: each is a failed attempt with a clear
reason (retried within the call's budget), never a crash; at start-up, one line and exit 2."""

from __future__ import annotations

import asyncio
import copy

import pytest
from pydantic import BaseModel, ConfigDict

from gaze.cli.main import run
from gaze.models.caller import Caller, RetryPolicy
from gaze.models.protocol import Message, NoReplyError
from gaze.models.providers.openai_chat import OpenAIChat
from gaze.models.structured import ask
from tests.cli.test_cli import one_line_error
from tests.cli.test_real_paths import on_server
from tests.standin import Reply, StandIn, chat_reply, minimal_chat


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str


BODIES = {
    "an HTML error page": b"<html><body><h1>502 Bad Gateway</h1></body></html>",
    "text that is not JSON": b"upstream connect error or disconnect/reset before headers",
    "bytes that are not UTF-8": b"\xff\xfe\xfa\xfb{}",
    "JSON nested too deep": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "a JSON list": b"[1, 2, 3]",
}


def ask_server(server: StandIn, max_retries: int = 3):
    caller = Caller(
        {"default": OpenAIChat("m", base_url=server.url + "/v1")},
        retry=RetryPolicy(initial_s=0.001),
    )
    messages = [Message.text("user", "x")]
    return asyncio.run(ask(caller, "observer", messages, Answer, max_retries=max_retries))


@pytest.mark.parametrize("kind", list(BODIES))
def test_a_malformed_body_is_a_failed_attempt_then_the_retry_succeeds(kind):
    with StandIn() as server:
        server.push(Reply(200, BODIES[kind]), chat_reply('{"label": "ok"}'))
        result = ask_server(server)
    assert result.value == Answer(label="ok")
    assert [r["ok"] for r in result.records] == [False, True]


@pytest.mark.parametrize("kind", list(BODIES))
def test_only_malformed_bodies_fail_the_call_with_a_clear_reason(kind):
    with StandIn(default=Reply(200, BODIES[kind])) as server:
        with pytest.raises(NoReplyError, match="malformed response body from http://127.0.0.1"):
            ask_server(server, max_retries=1)
        assert len(server.seen) == 2


def test_a_usage_block_that_is_not_integers_counts_as_zero_tokens():
    body = copy.deepcopy(chat_reply('{"label": "ok"}').body)
    body["usage"] = {"prompt_tokens": "many", "completion_tokens": -3, "total_tokens": None}
    with StandIn(default=Reply(200, body)) as server:
        result = ask_server(server)
    assert result.value == Answer(label="ok")
    assert result.records[0]["input_tokens"] == 0 and result.records[0]["output_tokens"] == 0


@pytest.mark.parametrize("kind", list(BODIES))
def test_at_start_up_a_malformed_body_is_one_line_and_exit_2(kind, forge_dir, forge_rows, capsys):
    row = forge_rows["clean"]
    with StandIn(default=Reply(200, BODIES[kind])) as server:
        code = run(on_server(row, forge_dir, server, "--max-retries", "0"))
    assert code == 2
    assert "malformed response body" in one_line_error(capsys.readouterr().err)


def test_the_stand_in_answers_normally_after_all(forge_dir, forge_rows, capsys):
    # the same command against a well-behaved server succeeds: the failures above are the bodies
    row = forge_rows["clean"]
    with StandIn(responder=minimal_chat) as server:
        assert run(on_server(row, forge_dir, server)) == 0
