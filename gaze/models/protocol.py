"""The backbone protocol: messages with text and images in, text (JSON) and usage out.

Providers only move bytes; structured parsing, retries, caching and accounting live in the caller
(``gaze.models.caller``) so every provider gets them the same way.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from gaze.errors import GazeInputError
from gaze.models import defaults

ROLES: tuple[str, ...] = (
    "grounding",
    "observer",
    "router",
    "specialist",
    "critic",
    "judge",
    "progress",
    "similarity",
)


@dataclass(frozen=True)
class TextPart:
    text: str


HASH_PIECE = 2047
"""Bytes hashed per step: CPython's hashlib lets go of the interpreter for any larger input."""


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` in hex, hashed in pieces small enough that the interpreter lock is
    kept. Released, it went to whichever thread held it last (the graph module's import, which
    runs while the first replies are awaited) for up to a switch interval (5 ms) per frame: the
    observers' requests of a 30 s clip left 45 ms later (``bench/graph_latency.py``). A frame
    hashes in microseconds either way."""
    digest = hashlib.sha256()
    view = memoryview(data)
    for start in range(0, len(view), HASH_PIECE):
        digest.update(view[start : start + HASH_PIECE])
    return digest.hexdigest()


@dataclass(frozen=True)
class ImagePart:
    """A JPEG image; ``sha256`` identifies it in cache keys without hashing bytes twice."""

    jpeg: bytes = field(repr=False)
    sha256: str = ""

    def __post_init__(self) -> None:
        if not self.sha256:
            object.__setattr__(self, "sha256", sha256_hex(self.jpeg))


@dataclass(frozen=True)
class VideoPart:
    """Consecutive frames sent as one video: JPEGs in time order, each as sent alone. A server
    whose model merges frames in time (Qwen-VL: two frames to one set of tokens) computes
    about half an image's tokens per frame; every frame is still sent."""

    frames: tuple[ImagePart, ...]
    fps: float = 0.0
    """Frames per second of the frames as sampled (0: not known); the server's own time stamps
    of the video follow it."""
    sha256: str = ""

    def __post_init__(self) -> None:
        if not self.sha256:
            joined = ",".join(f.sha256 for f in self.frames).encode()
            object.__setattr__(self, "sha256", sha256_hex(joined))


Part = TextPart | ImagePart | VideoPart


def media_ref(part: ImagePart | VideoPart) -> str:
    """How a cache key names an image or a video: ``image:SHA`` or ``video:SHA`` (the hash of
    its frames' hashes: the same frames as images, or cut into other videos, are another
    request)."""
    return f"{'video' if isinstance(part, VideoPart) else 'image'}:{part.sha256}"


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    parts: tuple[Part, ...]

    @staticmethod
    def text(role: Literal["system", "user", "assistant"], text: str) -> Message:
        return Message(role, (TextPart(text),))

    @property
    def images(self) -> int:
        """Image parts (what a server's images-per-prompt limit counts)."""
        return sum(isinstance(p, ImagePart) for p in self.parts)

    @property
    def videos(self) -> int:
        return sum(isinstance(p, VideoPart) for p in self.parts)

    @property
    def frames(self) -> int:
        """Frames shown: each image, and each frame of each video."""
        return sum(
            1 if isinstance(p, ImagePart) else len(p.frames)
            for p in self.parts
            if not isinstance(p, TextPart)
        )


@dataclass(frozen=True)
class ModelRequest:
    """One call: who asks (the agent role), what, and the shape of the answer."""

    role: str
    messages: tuple[Message, ...]
    schema_name: str
    json_schema: dict[str, Any] | None = None
    temperature: float = defaults.TEMPERATURE
    max_output_tokens: int = 2048
    sample: int = 0
    """Index of a repeated sample (self-consistency); part of the cache key."""

    @property
    def images(self) -> int:
        return sum(m.images for m in self.messages)

    @property
    def videos(self) -> int:
        return sum(m.videos for m in self.messages)

    @property
    def frames(self) -> int:
        return sum(m.frames for m in self.messages)


@dataclass
class ModelReply:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    refusal: str | None = None
    cached_tokens: int = 0
    """Input tokens the server answered from its prompt cache, where it reports them."""


@runtime_checkable
class Backbone(Protocol):
    """What a provider implements. ``native_json_schema``: the server enforces the schema."""

    provider: str
    model: str
    native_json_schema: bool

    async def complete(self, request: ModelRequest) -> ModelReply: ...


class TransientModelError(Exception):
    """Worth retrying after a pause: timeouts, 429, 5xx, dropped connections."""

    def __init__(
        self, message: str, retry_after: float | None = None, *, rate_limited: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        """A 429: the server is alive but asks for fewer requests (``gaze.models.throttle``)."""


def retry_after_header(exc: BaseException) -> float | None:
    """The Retry-After seconds of an SDK's HTTP error, where its response carries one."""
    try:
        value = exc.response.headers.get("retry-after")  # type: ignore[attr-defined]
        return float(value) if value is not None else None
    except (AttributeError, TypeError, ValueError):
        return None


TRANSIENT_STATUS = frozenset({408, 409, 429})
"""Codes under 500 worth the same request again: a request timeout, a conflict (both SDKs retry
these themselves when let), a 429."""


def status_error(
    code: int,
    where: str,
    service: str,
    detail: str,
    *,
    retry_after: float | None = None,
    not_found: Exception | None = None,
) -> Exception:
    """gaze's error for an HTTP status an API answered, one rule for every provider, live calls
    and batch jobs alike: a 429 is back-pressure (with its Retry-After); a 5xx, 408 or 409 is
    transient; a 401 or 403 (a key refused, or refused this model or region) cannot work at
    all; ``not_found`` stands for a 404 where it means more than a failed call; any other code
    fails the call (``detail``, the server's message, says why)."""
    if code == 429:
        return TransientModelError(f"429 from {where}", retry_after, rate_limited=True)
    if code >= 500 or code in TRANSIENT_STATUS:
        return TransientModelError(f"server error {code} from {where}")
    if code in (401, 403):
        return ModelConfigError(f"the {service} rejected the API key ({code})")
    if code == 404 and not_found is not None:
        return not_found
    return ModelCallError(f"{code}: {detail}")


MALFORMED_BODY_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,  # not JSON, not UTF-8 (json and codec errors are ValueErrors)
    RecursionError,  # JSON nested deeper than the parser goes
    AttributeError,  # JSON of the wrong shape (a list where an object was due)
    TypeError,
    KeyError,
    IndexError,
)
"""What an SDK raises on a 200 whose body is not the API's JSON (an HTML error page from a
proxy, garbage, a truncated stream): a failed attempt, retried like a transient error."""


def as_count(value: Any) -> int:
    """A token count from a server's usage block: a non-negative int, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class ModelCallError(Exception):
    """The call failed for good (e.g. a 400): the output counts as unparseable."""


class NoReplyError(Exception):
    """A call got no reply at all within its budget (server down, timeouts): the clip fails
    (a batch records it and retries it on resume), it is never reported as clean."""


class EndpointDownError(NoReplyError):
    """The circuit breaker is open: an endpoint failed too many times in a row, so the run
    stops sending it work instead of burning every call's retries against it."""


class ClipTimeoutError(NoReplyError):
    """A clip's diagnosis did not finish within its deadline (``clip_timeout_s``)."""


class ModelConfigError(GazeInputError):
    """The backbone cannot work at all (bad key, unknown model, no image support): exit 2."""


class EndpointUnreachableError(ModelConfigError):
    """The start-up check got no reply at all (refused connections, timeouts, 5xx to the
    end): a pool takes such an endpoint out of rotation; a lone endpoint fails the run."""


class FewerImagesServed(ModelConfigError):
    """The endpoint works, but takes fewer images per request than gaze's largest (found by
    its start-up check): requests of at most ``images`` images may still go to it."""

    def __init__(self, message: str, images: int) -> None:
        super().__init__(message)
        self.images = images
        """The most images one request to this endpoint may carry."""

    def allows(self, images: int) -> bool:
        """Whether a request of ``images`` images may go to the endpoint."""
        return images <= self.images
