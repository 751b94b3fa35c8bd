"""Any LangChain chat model handed in from Python (``BaseChatModel``)."""

from __future__ import annotations

from typing import Any

from gaze.models.protocol import ModelCallError, ModelReply, ModelRequest
from gaze.models.providers.openai_chat import chat_part


class LangChainChat:
    """The ``langchain`` provider: wraps a chat model object; the schema goes into the prompt."""

    provider = "langchain"
    native_json_schema = False

    def __init__(self, chat_model: Any, name: str | None = None) -> None:
        self.chat_model = chat_model
        self.model = (
            name
            or getattr(chat_model, "model_name", None)
            or getattr(chat_model, "model", None)
            or type(chat_model).__name__
        )

    @staticmethod
    def to_messages(request: ModelRequest) -> list[Any]:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

        kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
        out = []
        for message in request.messages:
            if message.frames:
                content: Any = [chat_part(p) for p in message.parts]
            else:
                content = "".join(getattr(p, "text", "") for p in message.parts)
            out.append(kinds[message.role](content=content))
        return out

    async def complete(self, request: ModelRequest) -> ModelReply:
        try:
            result = await self.chat_model.ainvoke(self.to_messages(request))
        except Exception as exc:  # the wrapped model's own errors: count as a failed call
            raise ModelCallError(f"{type(exc).__name__}: {exc}") from exc
        content = result.content
        text = (
            content
            if isinstance(content, str)
            else "".join(
                part.get("text", "") if isinstance(part, dict) else str(part) for part in content
            )
        )
        usage = getattr(result, "usage_metadata", None) or {}
        return ModelReply(
            text=text,
            input_tokens=int(usage.get("input_tokens", 0)),
            output_tokens=int(usage.get("output_tokens", 0)),
        )
