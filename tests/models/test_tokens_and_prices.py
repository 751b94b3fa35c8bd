"""Estimated tokens by each provider's image rule, and costs from the dated price table."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gaze.errors import GazeInputError
from gaze.models.prices import Price, Pricing
from gaze.models.tokens import image_tokens, jpeg_size
from gaze.video.frames import encode_jpeg


def test_jpeg_size_reads_the_frame_header():
    jpeg = encode_jpeg(np.zeros((576, 768, 3), np.uint8))
    assert jpeg_size(jpeg) == (768, 576)
    assert jpeg_size(b"not a jpeg") == (0, 0)


@pytest.mark.parametrize(
    ("rule", "detail", "tokens"),
    [
        ("openai", "auto", 85 + 170 * 2 * 2),  # 768x576 fits; 2x2 tiles of 512
        ("openai", "low", 85),
        ("gemini", "auto", 258),  # one 768 tile
        ("patches28", "auto", 28 * 21),  # ceil(768/28) x ceil(576/28)
    ],
)
def test_image_token_rules_hand_computed(rule, detail, tokens):
    assert image_tokens(rule, 768, 576, detail) == tokens


def test_openai_rule_scales_large_images_first():
    # 4096x2048 -> fit 2048x1024 -> short side 768: 1536x768 -> 3x2 tiles
    assert image_tokens("openai", 4096, 2048) == 85 + 170 * 6


def records(model: str, cache_hit: bool = False) -> list[dict]:
    return [
        {
            "model": model,
            "input_tokens": 1_000_000,
            "cached_input_tokens": 400_000,
            "output_tokens": 100_000,
            "cache_hit": cache_hit,
        }
    ]


def test_costs_from_the_table_count_the_servers_prompt_cache():
    pricing = Pricing.load()
    assert pricing.as_of and pricing.price_of("openai:gpt-4o") == Price(2.5, 1.25, 10.0)
    # 600k uncached x 2.5 + 400k cached x 1.25 + 100k output x 10 per million
    assert pricing.cost(records("openai:gpt-4o")) == pytest.approx(3.0)
    assert pricing.cost(records("openai:gpt-4o", cache_hit=True)) == 0.0  # gaze's own cache
    assert pricing.cost(records("openai:some-local-model")) == 0.0  # no price known


def test_a_user_table_extends_and_flat_prices_override(tmp_path):
    extra = tmp_path / "prices.json"
    extra.write_text(json.dumps({"models": {"openai:my-vlm": {"input": 1.0, "output": 2.0}}}))
    pricing = Pricing.load(str(extra))
    assert pricing.price_of("openai:my-vlm") == Price(1.0, 1.0, 2.0)
    assert pricing.price_of("openai:gpt-4o") is not None  # the default table is kept
    flat = Pricing.load(str(extra), flat_in=3.0, flat_out=4.0)
    assert flat.cost(records("openai:gpt-4o")) == pytest.approx(3.0 + 0.4)
    extra.write_text('{"models": {"x:y": {"output": 1}}}')
    with pytest.raises(GazeInputError, match="price table"):
        Pricing.load(str(extra))


def test_list_prices_come_from_the_maintained_price_data_and_a_user_table_wins(tmp_path):
    """genai-prices' data as installed: hosted models by provider, nothing for local ones; the
    user's table overrides a listed model."""
    pricing = Pricing.load()
    assert pricing.as_of.startswith("genai-prices ")
    flash = pricing.price_of("gemini:gemini-2.5-flash")
    assert flash is not None and flash.input == pytest.approx(0.3) and flash.output == 2.5
    assert flash.cached_input < flash.input
    for local in ("scripted:auto", "vllm:Qwen/Qwen2.5-VL-7B-Instruct", "openai:my-local-vlm"):
        assert pricing.price_of(local) is None
    extra = tmp_path / "prices.json"
    extra.write_text(json.dumps({"models": {"openai:gpt-4o": {"input": 1.0, "output": 1.0}}}))
    assert Pricing.load(str(extra)).price_of("openai:gpt-4o") == Price(1.0, 1.0, 1.0)


def test_the_price_data_loads_once_the_first_requests_are_out_not_before():
    """Loading genai-prices (about 0.25 s of imports) waits until the caller's first requests
    are on the wire (SEND_GRACE_S after the first was handed over: a thread started at the
    hand-over competed with the SDK building that request), and then looks up the caller's
    models: a fresh process, so that nothing else has loaded it."""
    from tests.fresh import python_output

    script = """
import asyncio, sys, threading
from gaze.models.caller import SEND_GRACE_S, Caller
from gaze.models.prices import Pricing, list_price
from gaze.models.protocol import Message, ModelRequest
from gaze.models.scripted import ScriptedBackbone

def loading():
    return any(thread.name == "gaze-prices" for thread in threading.enumerate())

class Hosted(ScriptedBackbone):
    provider = "openai"  # a model with a list price

    async def complete(self, request):
        print("asked", loading(), "genai_prices" in sys.modules)
        return await super().complete(request)

pricing = Pricing.load()
backbone = Hosted(lambda request: {}, model="gpt-4o", latency_s=3 * SEND_GRACE_S)
caller = Caller({"default": backbone}, pricing=pricing)
request = ModelRequest(role="observer", messages=(Message.text("user", "hi"),), schema_name="E")

async def run():
    await caller.send(request, caller.new_record(request))
    print("replied", caller.first_requests_out.is_set())

asyncio.run(run())
for thread in threading.enumerate():
    if thread.name == "gaze-prices":
        thread.join()
print("after", "genai_prices" in sys.modules, list_price.cache_info().currsize)
"""
    # read in the background while the reply is awaited: the report finds the price ready
    assert python_output(script, timeout=60).split() == (
        ["asked", "False", "False", "replied", "True", "after", "True", "1"]
    )
