"""Bounded time against servers that trickle, hang, rate-limit for an hour or die: a total
deadline per request, one budget per call, a deadline per clip, a capped Retry-After and a
circuit breaker. Every request loop here is bounded in count and time."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from pydantic import BaseModel, ConfigDict

from gaze.api import adiagnose
from gaze.cli.main import run
from gaze.models.caller import Caller, RetryPolicy
from gaze.models.protocol import ClipTimeoutError, Message, NoReplyError
from gaze.models.providers.openai_chat import OpenAIChat
from gaze.models.scripted import ScriptedBackbone
from gaze.models.structured import ask
from gaze.settings.context import GazeContext
from tests.cli.test_cli import one_line_error
from tests.standin import (
    Reply,
    StandIn,
    chat_reply,
    clip_work,
    error_reply,
    minimal_chat,
    probes_pass,
)


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str


def caller(server: StandIn, **options) -> Caller:
    backbone = OpenAIChat("m", base_url=server.url + "/v1")
    return Caller({"default": backbone}, retry=RetryPolicy(initial_s=0.01, max_s=0.1), **options)


def ask_once(c: Caller, max_retries: int = 1):
    return asyncio.run(
        ask(c, "observer", [Message.text("user", "x")], Answer, max_retries=max_retries)
    )


def test_a_server_that_trickles_bytes_cannot_hold_a_request_past_its_deadline():
    trickle = chat_reply('{"label": "ok"}')
    trickle.drip_s = 0.2  # ~300 bytes: a minute at this pace; the read timeout never fires
    with StandIn(default=trickle) as server:
        started = time.perf_counter()
        with pytest.raises(NoReplyError, match="no complete reply within 1 s"):
            ask_once(caller(server, request_timeout_s=1.0), max_retries=1)
        elapsed = time.perf_counter() - started
    assert elapsed < 5  # two attempts of 1 s and a short pause


def test_a_server_that_never_answers_fails_the_start_up_check_in_bounded_time(
    forge_dir, forge_rows, capsys
):
    row = forge_rows["clean"]
    with StandIn(default=Reply(200, b"{}", delay_s=60)) as server:
        args = ["diagnose", str(forge_dir / row.video), "-i", row.instruction]
        args += ["--model", "openai:m", "--base-url", server.url + "/v1"]
        started = time.perf_counter()
        code = run([*args, "--request-timeout", "0.5", "--max-retries", "1"])
        elapsed = time.perf_counter() - started
    assert code == 2 and elapsed < 10
    assert "no complete reply within 0.5 s" in one_line_error(capsys.readouterr().err)


def test_an_hour_of_retry_after_is_capped():
    with StandIn() as server:
        server.push(error_reply(429, "come back later", {"retry-after": "3600"}))
        server.push(chat_reply('{"label": "ok"}'))
        started = time.perf_counter()
        result = ask_once(caller(server))
    assert result.value == Answer(label="ok") and time.perf_counter() - started < 5


def test_a_clip_that_runs_past_its_deadline_fails(forge_dir, forge_rows):
    row = forge_rows["clean"]
    slow = ScriptedBackbone(fallback_minimal=True, latency_s=0.5)
    context = GazeContext(use_cache=False, clip_timeout_s=1.0)
    started = time.perf_counter()
    with pytest.raises(ClipTimeoutError, match="not finished within 1 s"):
        asyncio.run(
            adiagnose(
                forge_dir / row.video, row.instruction, backbones={"default": slow}, context=context
            )
        )
    assert time.perf_counter() - started < 5


def test_a_dead_endpoint_fails_a_clip_after_one_calls_budget(forge_dir, forge_rows, capsys):
    row = forge_rows["clean"]
    with StandIn(responder=probes_pass(error_reply(503, "the backend is gone"))) as server:
        args = ["diagnose", str(forge_dir / row.video), "-i", row.instruction]
        args += ["--model", "openai:m", "--base-url", server.url + "/v1", "--json"]
        code = run(args)
        sent = len(clip_work(server.seen))
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    assert "no reply from openai:m after 4 attempts" in one_line_error(captured.err)
    # the two grounding calls, four attempts each: nothing else is sent before they answer
    assert sent <= 2 * 4


def test_the_circuit_breaker_stops_work_to_a_dead_endpoint(forge_dir, tmp_path):
    """Six calls in a row with no reply after their retries: the breaker opens and the other
    clips fail at once, sending nothing. A clip's two grounding calls run side by side, so a
    clip ends with one or both of them spent: three to six clips fail on their own replies."""
    manifest = forge_dir / "manifest.jsonl"
    with StandIn(responder=probes_pass(error_reply(503, "the backend is gone"))) as server:
        args = ["bench", "run", str(manifest), "--method", "robogaze", "--out", str(tmp_path / "r")]
        args += ["--model", "openai:m", "--base-url", server.url + "/v1", "--clips-in-flight", "1"]
        code = run(args)
        sent = len(clip_work(server.seen))
    failed = json.loads((tmp_path / "r" / "run.json").read_text())["failed"]
    assert code == 1 and len(failed) == 8
    reasons = [failed[clip] for clip in sorted(failed)]  # --clips 1: they run in this order
    spent = [why for why in reasons if "NoReplyError" in why]
    assert 3 <= len(spent) <= 6 and reasons[: len(spent)] == spent
    opened = reasons[len(spent) :]
    assert all("6 calls in a row got no reply after their retries" in why for why in opened)
    # six clips' two grounding calls, at most four attempts each; nothing once it opened
    assert sent <= 6 * 2 * 4


def test_a_hanging_models_endpoint_does_not_stall_the_start_up_check(forge_dir, forge_rows, capsys):
    def respond(body):
        if body is None:  # GET /v1/models never answers
            return Reply(200, b"{}", delay_s=60)
        return minimal_chat(body)

    row = forge_rows["clean"]
    with StandIn(responder=respond) as server:
        args = ["diagnose", str(forge_dir / row.video), "-i", row.instruction, "--json"]
        args += ["--model", "openai:m", "--base-url", server.url + "/v1", "--request-timeout", "1"]
        started = time.perf_counter()
        code = run(args)
        elapsed = time.perf_counter() - started
    assert code == 0, capsys.readouterr().err
    assert elapsed < 10
