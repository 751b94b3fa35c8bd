"""Batch rounds without a provider: the deferred backbone over the scripted one, the graph run
round by round as ``bench run --batch-api`` runs it (``gaze.models.batch``)."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from gaze.api import adiagnose
from gaze.bench.forge.forge import forge_clip
from gaze.models.batch.deferred import Book, CallDeferred, deferring
from gaze.models.batch.jobs import chunked
from gaze.models.cache import ResponseCache
from gaze.models.caller import Caller
from gaze.models.prices import Price, Pricing
from gaze.models.protocol import ModelReply
from gaze.models.scripted import ScriptedBackbone
from gaze.models.settle import all_settled
from gaze.settings.context import GazeContext


@pytest.fixture(scope="module")
def clip_24s(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("batch") / "clip.mp4"
    forge_clip(path, seed=5, failures=[], duration_s=24.0)
    return path


def _round(video: Path, book: Book, live: ScriptedBackbone, cache: ResponseCache | None) -> bool:
    """One round: the clip against the book's replies; True when it finished."""
    try:
        with deferring(Caller({"default": live}, cache=cache), book) as caller:
            asyncio.run(adiagnose(video, "put the block on the plate", caller=caller,
                                  context=GazeContext(model="scripted:auto")))  # fmt: skip
    except CallDeferred:
        return False
    return True


def test_each_round_takes_the_clip_one_stage_on_with_every_sibling_call_registered(
    clip_24s, tmp_path
):
    live = ScriptedBackbone(model="auto", fallback_minimal=True)
    book = Book(ResponseCache(tmp_path / "batch"), budget=3)
    cache = ResponseCache(tmp_path / "cache")
    stages: list[Counter[str]] = []
    for _ in range(10):
        if _round(clip_24s, book, live, cache):
            break
        stages.append(Counter(request.role for _, request in book.registered.values()))
        for key, (backbone, request) in book.registered.items():  # the job's lines, answered
            book.replies.put(key, asyncio.run(backbone.complete(request)))
        book.registered.clear()
    # 6 windows: two segments (four windows and two), one observer call each
    assert stages[:3] == [Counter(grounding=1), Counter(observer=2), Counter(router=1)]
    assert set(stages[3]) == {"specialist"} and stages[3]["specialist"] >= 2
    # each request was sent once: a round answers what earlier rounds collected itself
    sent = [r for r in live.requests if r.role != "preflight"]
    assert len(sent) == sum(sum(s.values()) for s in stages)


def _rounds(video: Path, book: Book, live: ScriptedBackbone, cache: ResponseCache | None):
    """Rounds until the clip finishes, each job answered by ``live``: the roles of each job."""
    stages: list[Counter[str]] = []
    for _ in range(10):
        if _round(video, book, live, cache):
            return stages
        stages.append(Counter(request.role for _, request in book.registered.values()))
        for key, (backbone, request) in book.registered.items():
            book.replies.put(key, asyncio.run(backbone.complete(request)))
        book.registered.clear()
    raise AssertionError(f"not finished in 10 rounds: {stages}")


def test_live_roles_pass_their_stage_within_a_round_and_are_sent_once(clip_24s, tmp_path):
    """``--batch-live grounding --batch-live router``: the clip reaches the observers in its
    first round and the specialists in its second (the clean clip has no critic call);
    without a response cache, later rounds replay the live replies from the batch store
    rather than send them again."""
    live = ScriptedBackbone(model="auto", fallback_minimal=True)
    book = Book(
        ResponseCache(tmp_path / "batch"), budget=3, live_roles=frozenset({"grounding", "router"})
    )
    stages = _rounds(clip_24s, book, live, cache=None)
    # two jobs (three rounds), where every call batched takes four (five rounds)
    assert stages == [Counter(observer=2), Counter(specialist=stages[1]["specialist"])]
    assert stages[1]["specialist"] >= 2
    sent = Counter(r.role for r in live.requests if r.role != "preflight")
    assert sent["grounding"] == sent["router"] == 1
    assert sent == sum(stages, Counter(grounding=1, router=1))


def test_a_request_already_in_the_response_cache_goes_in_no_job(clip_24s, tmp_path):
    live = ScriptedBackbone(model="auto", fallback_minimal=True)
    cache = ResponseCache(tmp_path / "cache")
    asyncio.run(adiagnose(clip_24s, "put the block on the plate", context=GazeContext(),
                          caller=Caller({"default": live}, cache=cache)))  # fmt: skip
    book = Book(ResponseCache(tmp_path / "batch"), budget=3)
    assert _round(clip_24s, book, live, cache)  # a live run answered every call already
    assert book.registered == {}


def test_all_settled_waits_for_every_sibling_before_the_first_error():
    finished: list[str] = []

    async def fails() -> str:
        raise CallDeferred("k" * 64)

    async def slow() -> str:
        await asyncio.sleep(0.05)
        finished.append("slow")
        return "slow"

    with pytest.raises(CallDeferred):
        asyncio.run(all_settled(fails(), slow()))
    assert finished == ["slow"]
    assert asyncio.run(all_settled(slow(), slow())) == ["slow", "slow"]


def test_jobs_are_cut_within_the_limits_on_lines_and_bytes():
    sizes = [5, 5, 5, 20, 1, 1]
    chunks = list(chunked(list(range(6)), lambda i: sizes[i], max_items=2, max_bytes=12))
    assert chunks == [[0, 1], [2], [3], [4, 5]]


def test_a_batch_run_is_billed_at_the_batch_rate():
    pricing = Pricing({"openai:m": Price(2.5, 1.25, 10.0)})
    record = {"role": "observer", "model": "openai:m", "cache_hit": False, "input_tokens": 1000,
              "output_tokens": 100, "cached_input_tokens": 400}  # fmt: skip
    live = pricing.cost([record])
    assert live == pytest.approx((600 * 2.5 + 400 * 1.25 + 100 * 10.0) / 1e6)
    assert pricing.at_rate(0.5).cost([record]) == pytest.approx(live / 2)
    # a batch run's live roles are billed in full
    grounding = {**record, "role": "grounding"}
    batched = pricing.at_rate(0.5, frozenset({"grounding"}))
    assert batched.cost([record, grounding]) == pytest.approx(live / 2 + live)


def test_a_store_from_an_earlier_gaze_gains_the_new_columns(tmp_path):
    import sqlite3

    folder = tmp_path / "old"
    folder.mkdir()
    db = sqlite3.connect(folder / "responses.sqlite")
    db.execute("CREATE TABLE replies (key TEXT PRIMARY KEY, text TEXT NOT NULL, "
               "input_tokens INTEGER, output_tokens INTEGER)")  # fmt: skip
    db.execute("INSERT INTO replies VALUES ('old', '{}', 3, 4)")
    db.commit()
    db.close()
    cache = ResponseCache(folder)
    assert cache.get("old") == ModelReply("{}", 3, 4)
    cache.put("new", ModelReply("", 5, 6, refusal="no", cached_tokens=2))
    assert cache.get("new") == ModelReply("", 5, 6, refusal="no", cached_tokens=2)
