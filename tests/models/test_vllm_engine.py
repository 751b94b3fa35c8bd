"""The in-process vLLM engine without a GPU: a stand-in ``vllm`` module records what gaze would
ask of the real one (engine settings, chat messages, sampling and structured-output params)."""

from __future__ import annotations

import asyncio
import sys
import types
from dataclasses import dataclass, field

import pytest

from gaze.models.protocol import ImagePart, Message, ModelConfigError, ModelRequest, TextPart
from gaze.models.registry import make_backbone


@dataclass
class FakeLLM:
    model: str
    limit_mm_per_prompt: dict
    calls: list = field(default_factory=list)

    def chat(self, messages, params):
        self.calls.append((messages, params))
        output = types.SimpleNamespace(text='{"ok": true}', token_ids=[1, 2, 3])
        return [types.SimpleNamespace(outputs=[output], prompt_token_ids=list(range(40)))]


@pytest.fixture
def fake_vllm(monkeypatch):
    built: list[FakeLLM] = []
    module = types.ModuleType("vllm")

    def llm(**kwargs):
        built.append(FakeLLM(**kwargs))
        return built[-1]

    module.LLM = llm
    module.SamplingParams = lambda **kwargs: kwargs
    sampling = types.ModuleType("vllm.sampling_params")
    sampling.StructuredOutputsParams = lambda **kwargs: ("structured", kwargs)
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling)
    return built


def test_without_vllm_the_provider_is_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import fails
    with pytest.raises(ModelConfigError, match=r"pip install 'gaze\[vllm\]'"):
        make_backbone("vllm:Qwen/Qwen2.5-VL-7B-Instruct")


def test_the_engine_loads_on_first_use_with_the_image_limit_gaze_needs(fake_vllm):
    engine = make_backbone("vllm:Qwen/Qwen2.5-VL-7B-Instruct", max_images=33)
    assert fake_vllm == []  # planning a run (a Ray driver) loads no weights
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    request = ModelRequest(
        role="critic",
        messages=(
            Message.text("system", "static"),
            Message("user", (TextPart("t=0.00s"), ImagePart(b"\xff\xd8jpeg"), TextPart("task"))),
        ),
        schema_name="Verdict",
        json_schema=schema,
        temperature=0.0,
        max_output_tokens=512,
    )
    reply = asyncio.run(engine.complete(request))
    asyncio.run(engine.complete(request))
    assert len(fake_vllm) == 1  # one engine, loaded once
    llm = fake_vllm[0]
    assert llm.model == "Qwen/Qwen2.5-VL-7B-Instruct"
    assert llm.limit_mm_per_prompt == {"image": 33}
    messages, params = llm.calls[0]
    assert [m["role"] for m in messages] == ["system", "user"]
    kinds = [p["type"] for p in messages[1]["content"]]
    assert kinds == ["text", "image_url", "text"]
    assert messages[1]["content"][1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert params["structured_outputs"] == ("structured", {"json": schema})
    assert params["max_tokens"] == 512 and params["temperature"] == 0.0
    assert (reply.text, reply.input_tokens, reply.output_tokens) == ('{"ok": true}', 40, 3)


def test_ray_workers_hold_a_gpu_each_for_their_engine():
    from gaze.bench.ray_run import default_workers, worker_resources

    assert worker_resources(0) == {"num_cpus": 1}
    assert worker_resources(1) == {"num_cpus": 1, "num_gpus": 1}
    assert default_workers({"CPU": 16, "GPU": 4}, 1) == 4
    assert default_workers({"CPU": 16, "GPU": 4}, 0.5) == 8
    assert default_workers({"CPU": 16}, 0) == 16
