"""One reading of an API's HTTP status for every provider, live calls and batch jobs
(``gaze.models.protocol.status_error``): the real openai and google-genai SDKs against a
stand-in server."""

from __future__ import annotations

import asyncio

import pytest

from gaze.models.batch.gemini_jobs import GeminiJobs
from gaze.models.batch.openai_jobs import OpenAIJobs
from gaze.models.protocol import (
    Message,
    ModelCallError,
    ModelConfigError,
    ModelRequest,
    TransientModelError,
)
from gaze.models.providers.gemini import GeminiChat
from gaze.models.providers.openai_chat import OpenAIChat
from tests.standin import StandIn, error_reply

REQUEST = ModelRequest("critic", (Message.text("user", "hello"),), "Answer")


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv("GEMINI_API_KEY", "gm-test")


def _raised(attempt) -> BaseException:
    with pytest.raises(Exception) as caught:
        asyncio.run(attempt)
    return caught.value


def _both_ways(reply) -> tuple[BaseException, BaseException]:
    """What an openai live call and batch API request raise when the server answers ``reply``."""
    with StandIn(default=reply) as server:
        live = OpenAIChat("m", base_url=server.url + "/v1")
        return _raised(live.complete(REQUEST)), _raised(OpenAIJobs(live).find("run-1"))


def _every_way(reply) -> list[BaseException]:
    """``_both_ways``, then the same for Gemini's live call and batch mode."""
    with StandIn(default=reply) as server:
        live = GeminiChat("m", base_url=server.url)
        gemini = [_raised(live.complete(REQUEST)), _raised(GeminiJobs(live).find("run-1"))]
    return [*_both_ways(reply), *gemini]


def test_a_429_is_back_pressure_with_its_retry_after_live_and_in_batch():
    for exc in _every_way(error_reply(429, "slow down", {"retry-after": "7"})):
        assert isinstance(exc, TransientModelError), exc
        assert exc.rate_limited and exc.retry_after == 7.0


@pytest.mark.parametrize("status", [408, 409, 500, 503])
def test_timeouts_conflicts_and_server_errors_are_worth_another_attempt(status):
    for exc in _every_way(error_reply(status, "busy")):
        assert isinstance(exc, TransientModelError) and not exc.rate_limited, exc
        assert f"server error {status}" in str(exc)


@pytest.mark.parametrize("status", [401, 403])
def test_a_rejected_key_is_a_setting_to_fix_not_a_call_to_retry(status):
    live, batch, gemini_live, gemini_batch = _every_way(error_reply(status, "bad key"))
    assert isinstance(live, ModelConfigError) and "server rejected the API key" in str(live)
    assert isinstance(batch, ModelConfigError) and "batch API rejected" in str(batch)
    assert isinstance(gemini_live, ModelConfigError) and "Gemini API rejected" in str(gemini_live)
    assert isinstance(gemini_batch, ModelConfigError) and "batch API rejected" in str(gemini_batch)


def test_a_404_is_a_missing_model_live_and_a_failed_request_in_batch():
    """A live 404 names the model (nothing will work); a batch API 404 is a job or file the API
    no longer knows, which ``collect`` answers by sending its lines again."""
    live, batch = _both_ways(error_reply(404, "no such thing"))
    assert isinstance(live, ModelConfigError) and "model 'm' not found" in str(live)
    assert type(batch) is ModelCallError and "404: no such thing" in str(batch)


def test_a_refused_request_keeps_the_servers_reason():
    for exc in _every_way(error_reply(400, "too many images")):
        assert type(exc) is ModelCallError and str(exc).startswith("400: "), exc
        assert "too many images" in str(exc)
