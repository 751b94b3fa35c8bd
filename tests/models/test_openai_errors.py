"""One reading of the openai SDK's errors for live calls and batch jobs
(``gaze.models.providers.openai_chat.api_error``): the real SDK against a stand-in server."""

from __future__ import annotations

import asyncio

import pytest

from gaze.models.batch.openai_jobs import OpenAIJobs
from gaze.models.protocol import (
    Message,
    ModelCallError,
    ModelConfigError,
    ModelRequest,
    TransientModelError,
)
from gaze.models.providers.openai_chat import OpenAIChat
from tests.standin import StandIn, error_reply

REQUEST = ModelRequest("critic", (Message.text("user", "hello"),), "Answer")


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _both_ways(reply) -> tuple[BaseException, BaseException]:
    """What a live call and a batch API request raise when the server answers ``reply``."""
    with StandIn(default=reply) as server:
        live = OpenAIChat("m", base_url=server.url + "/v1")
        raised: list[BaseException] = []
        for attempt in (live.complete(REQUEST), OpenAIJobs(live).find("run-1")):
            with pytest.raises(Exception) as caught:
                asyncio.run(attempt)
            raised.append(caught.value)
    return raised[0], raised[1]


def test_a_429_is_back_pressure_with_its_retry_after_live_and_in_batch():
    for exc in _both_ways(error_reply(429, "slow down", {"retry-after": "7"})):
        assert isinstance(exc, TransientModelError), exc
        assert exc.rate_limited and exc.retry_after == 7.0


@pytest.mark.parametrize("status", [408, 409, 500, 503])
def test_timeouts_conflicts_and_server_errors_are_worth_another_attempt(status):
    for exc in _both_ways(error_reply(status, "busy")):
        assert isinstance(exc, TransientModelError) and not exc.rate_limited, exc
        assert f"server error {status}" in str(exc)


def test_a_rejected_key_is_a_setting_to_fix_not_a_call_to_retry():
    live, batch = _both_ways(error_reply(401, "bad key"))
    assert isinstance(live, ModelConfigError) and "server rejected the API key" in str(live)
    assert isinstance(batch, ModelConfigError) and "batch API rejected" in str(batch)


def test_a_404_is_a_missing_model_live_and_a_failed_request_in_batch():
    """A live 404 names the model (nothing will work); a batch API 404 is a job or file the API
    no longer knows, which ``collect`` answers by sending its lines again."""
    live, batch = _both_ways(error_reply(404, "no such thing"))
    assert isinstance(live, ModelConfigError) and "model 'm' not found" in str(live)
    assert type(batch) is ModelCallError and "404: no such thing" in str(batch)


def test_a_refused_request_keeps_the_servers_reason():
    for exc in _both_ways(error_reply(400, "too many images")):
        assert type(exc) is ModelCallError and str(exc) == "400: too many images"
