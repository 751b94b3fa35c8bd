"""The in-process vLLM engine, for batch use on GPU machines (optional extra ``vllm``).

The usual path to vLLM is its OpenAI-compatible server through the ``openai`` provider; this
engine avoids the HTTP hop when gaze runs on the GPU machine itself -- for example one engine
per Ray worker, each worker holding a GPU (``bench run --executor ray --ray-gpus-per-worker 1
--model vllm:MODEL``). It cannot be exercised without a GPU, so its import guard and request
shaping are tested against a stand-in ``vllm`` module.
"""

from __future__ import annotations

import asyncio
from typing import Any

from gaze.models import defaults
from gaze.models.protocol import ModelConfigError, ModelReply, ModelRequest
from gaze.models.providers.openai_chat import chat_part


def chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """OpenAI-style chat messages, the form ``vllm.LLM.chat`` takes."""
    return [
        {
            "role": m.role,
            "content": [chat_part(p) for p in m.parts],
        }
        for m in request.messages
    ]


class VLLMEngine:
    """The ``vllm`` provider (imported only when chosen)."""

    provider = "vllm"
    native_json_schema = True

    def __init__(self, model: str, max_images: int = defaults.MAX_FRAMES_PER_CALL) -> None:
        try:
            import vllm
        except ImportError:
            raise ModelConfigError(
                "the vllm provider needs vLLM on a GPU machine: pip install 'gaze[vllm]' "
                "(or serve the model with vLLM and use --model openai:MODEL --base-url URL)"
            ) from None
        self.model = model
        self.max_images = max(1, max_images)
        self._vllm = vllm
        self._llm: Any = None
        self._lock = asyncio.Lock()

    def _engine(self) -> Any:
        """The engine, loaded on first use: a process that only plans work (a Ray driver, a
        cached rerun) never loads weights. vLLM allows one image per prompt unless told
        otherwise; gaze sends up to ``max_images``."""
        if self._llm is None:
            self._llm = self._vllm.LLM(
                model=self.model, limit_mm_per_prompt={"image": self.max_images}
            )
        return self._llm

    async def complete(self, request: ModelRequest) -> ModelReply:
        vllm = self._vllm
        structured = None
        if request.json_schema is not None:
            from vllm.sampling_params import StructuredOutputsParams

            structured = StructuredOutputsParams(json=request.json_schema)
        params = vllm.SamplingParams(
            temperature=request.temperature,
            max_tokens=request.max_output_tokens,
            structured_outputs=structured,
        )
        async with self._lock:  # one engine, one batch at a time
            llm = await asyncio.to_thread(self._engine)
            outputs = await asyncio.to_thread(llm.chat, chat_messages(request), params)
        first = outputs[0]
        return ModelReply(
            text=first.outputs[0].text,
            input_tokens=len(first.prompt_token_ids or []),
            output_tokens=len(first.outputs[0].token_ids or []),
        )
