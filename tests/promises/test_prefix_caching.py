"""README "What a clip costs in images": against a server with a per-token prefix cache (the
stand-in simulates vLLM's automatic prefix caching), each frame is computed once per clip, and
the report's cost line bills the tokens the server answered from its cache at the cached price."""

from __future__ import annotations

import json

from gaze.schema.report import Report
from tests.prefix_cache import BLOCK, PrefixCache, data_url_bytes, image_patches, request_tokens
from tests.promises.conftest import gaze_cli
from tests.standin import StandIn, clip_work, minimal_chat

PRICE = {"input": 2.0, "cached_input": 0.5, "output": 8.0}


def test_each_frame_is_computed_once_and_the_cache_is_billed_at_its_price(long_clip, tmp_path):
    path, row = long_clip
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"openai:m": PRICE}}))
    cache = PrefixCache()
    with StandIn(responder=cache.responder(minimal_chat)) as server:
        proc = gaze_cli(
            "diagnose", str(path), "-i", row.instruction, "--model", "openai:m",
            "--base-url", server.url + "/v1", "--json", "--no-cache",
            env={"GAZE_PRICES": str(prices)},
        )  # fmt: skip
        work = clip_work(server.seen)
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    served = [s for s in cache.served if s.schema != "Probe"]
    assert len(served) == len(work)

    frames = {
        part["image_url"]["url"]
        for seen in work
        for message in seen.body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    }
    assert len(frames) == 24 * 4  # every frame of the 24 s clip at 4 per second
    once = sum(image_patches(data_url_bytes(url)) for url in frames)
    sent = sum(s.image_tokens for s in served)
    computed = sum(s.uncached_image_tokens for s in served)
    # Each frame computed once; a block that holds a call's last image tokens and its own task
    # text is computed again, at most one block per request.
    assert once <= computed <= once + BLOCK * len(served)
    assert sent > 2 * once  # the specialists' calls sent the frames again, from the cache

    manifest = report.manifest
    assert manifest.cached_input_tokens == sum(s.cached for s in served)
    billed = (
        (manifest.input_tokens - manifest.cached_input_tokens) * PRICE["input"]
        + manifest.cached_input_tokens * PRICE["cached_input"]
        + manifest.output_tokens * PRICE["output"]
    ) / 1e6
    assert manifest.cost_usd == round(billed, 6)
    assert manifest.input_tokens == sum(s.tokens for s in served)


def test_the_stand_in_caches_whole_blocks_of_a_shared_prefix_and_forgets_the_oldest():
    def body(*texts: str) -> dict:
        return {
            "messages": [{"role": "user", "content": [{"type": "text", "text": t} for t in texts]}]
        }

    cache = PrefixCache(capacity_tokens=BLOCK * 40)
    first = cache.serve(body("a" * 400, "question one"))
    assert first.cached == 0
    again = cache.serve(body("a" * 400, "question two"))
    tokens = len(request_tokens(body("a" * 400)))
    # the shared part is 1 role token + 100 text tokens: 6 whole blocks of 16
    assert again.cached == (tokens - 1) // BLOCK * BLOCK == 96
    assert cache.serve(body("b" + "a" * 399, "question one")).cached == 0
    cache.serve(body("c" * 4 * BLOCK * 40))  # 40 blocks of its own: evicts all before it
    assert cache.serve(body("a" * 400, "question one")).cached == 0
