"""Backbones: the protocol every provider implements, the scripted test backbone, the cached,
counted caller, and structured output.

    from gaze.models import Backbone, ScriptedBackbone, Caller, ask, make_backbone

Provider SDKs (openai, google-genai, vllm, langchain) are imported only when a provider is
chosen (``make_backbone("openai:gpt-4o")``), never by importing this package.
"""

from typing import TYPE_CHECKING

from gaze.lazy import lazy_members

if TYPE_CHECKING:
    from gaze.models.caller import Caller, CallRecord, RetryPolicy
    from gaze.models.protocol import (
        ROLES,
        Backbone,
        ImagePart,
        Message,
        ModelCallError,
        ModelConfigError,
        ModelReply,
        ModelRequest,
        NoReplyError,
        TextPart,
        TransientModelError,
        VideoPart,
    )
    from gaze.models.registry import bind_roles, make_backbone, parse_spec
    from gaze.models.scripted import ScriptedBackbone
    from gaze.models.structured import Structured, ask

__getattr__ = lazy_members(
    __name__,
    {
        "Caller": "caller",
        "CallRecord": "caller",
        "RetryPolicy": "caller",
        "ROLES": "protocol",
        "Backbone": "protocol",
        "ImagePart": "protocol",
        "Message": "protocol",
        "ModelCallError": "protocol",
        "ModelConfigError": "protocol",
        "ModelReply": "protocol",
        "ModelRequest": "protocol",
        "NoReplyError": "protocol",
        "TextPart": "protocol",
        "TransientModelError": "protocol",
        "VideoPart": "protocol",
        "bind_roles": "registry",
        "make_backbone": "registry",
        "parse_spec": "registry",
        "ScriptedBackbone": "scripted",
        "Structured": "structured",
        "ask": "structured",
    },
)

__all__ = [
    "ROLES",
    "Backbone",
    "CallRecord",
    "Caller",
    "ImagePart",
    "Message",
    "ModelCallError",
    "ModelConfigError",
    "ModelReply",
    "ModelRequest",
    "NoReplyError",
    "RetryPolicy",
    "ScriptedBackbone",
    "Structured",
    "TextPart",
    "TransientModelError",
    "VideoPart",
    "ask",
    "bind_roles",
    "make_backbone",
    "parse_spec",
]
