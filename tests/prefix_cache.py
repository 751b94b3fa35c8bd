"""A stand-in for a model server's per-token prefix cache, as vLLM's automatic prefix caching
works: a request is a sequence of tokens, cut into blocks of ``block`` tokens; each full block is
keyed by a hash of its tokens and of every block before it; a request reuses its longest run of
leading blocks already in the cache and computes the rest; the cache keeps ``capacity_tokens``
worth of blocks and evicts the least recently used.

Tokens, as a vision model's chat template makes them: a marker per message role, text at one
token per 4 characters, an image at one token per 28x28 patch (Qwen-VL style), each image token
carrying the image's hash, so the same picture at the same place is the same tokens (as vLLM
keys image placeholders by the image's hash).

The server answers with ``usage.prompt_tokens_details.cached_tokens`` (what vLLM and OpenAI
report), and keeps, per request, its tokens, cached tokens, image tokens and cached image
tokens. A request's blocks enter the cache when it arrives (prefill done at once): two requests
arriving together with the same prefix both find it cached only if one arrived first.
"""

from __future__ import annotations

import base64
import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from tests.standin import Reply

PATCH = 28
BLOCK = 16
"""vLLM's default block size (tokens per cache block)."""
CAPACITY_TOKENS = 131_072
"""About what a 24 GB GPU keeps for a 7B vision model's KV cache after its weights."""


@dataclass(frozen=True)
class Served:
    """What one request cost the server."""

    schema: str
    """The name of the answer's schema (``Probe`` for start-up checks)."""
    tokens: int
    cached: int
    image_tokens: int
    cached_image_tokens: int

    @property
    def uncached_image_tokens(self) -> int:
        return self.image_tokens - self.cached_image_tokens


def data_url_bytes(data_url: str) -> bytes:
    """The image a data URL carries, as sent."""
    return base64.b64decode(data_url.split(",", 1)[1])


def image_patches(raw: bytes) -> int:
    """Tokens of an encoded image: one per 28x28 patch of the image as sent."""
    image = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
    height, width = image.shape[:2]
    return math.ceil(width / PATCH) * math.ceil(height / PATCH)


def media_url(part: dict[str, Any]) -> str | None:
    """The data URL of an image or video part (None for text)."""
    kind = part["type"]
    return part[kind]["url"] if kind in ("image_url", "video_url") else None


def url_frames(url: str) -> list[bytes]:
    """The JPEGs a data URL carries: one image, or a video's frames as vLLM reads
    ``data:video/jpeg;base64,F1,F2,...``."""
    if url.startswith("data:video/jpeg"):
        return [base64.b64decode(f) for f in url.split(",")[1:]]
    return [data_url_bytes(url)]


def url_tokens(url: str) -> int:
    """Tokens of an image or video, Qwen-VL style: a video's frames merge two by two in time
    (its temporal patch of 2), so n frames cost ceil(n / 2) frames' patches."""
    frames = url_frames(url)
    if url.startswith("data:video/"):
        return math.ceil(len(frames) / 2) * image_patches(frames[0])
    return image_patches(frames[0])


def request_tokens(body: dict[str, Any]) -> list[tuple[str, bool]]:
    """An OpenAI chat request as (token, is_image) in the order the model reads them."""
    tokens: list[tuple[str, bool]] = []
    for message in body["messages"]:
        tokens.append((f"<|{message['role']}|>", False))
        content = message["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for part in parts:
            url = media_url(part)
            if url is not None:
                digest = hashlib.sha256(url.encode()).hexdigest()[:16]
                tokens += [(f"<img {digest} {i}>", True) for i in range(url_tokens(url))]
            else:
                text = part["text"]
                tokens += [(text[i : i + 4], False) for i in range(0, len(text), 4)]
    tokens.append(("<|assistant|>", False))
    return tokens


class PrefixCache:
    """The cache and its accounting (thread-safe: a threading server calls it per request)."""

    def __init__(self, capacity_tokens: int = CAPACITY_TOKENS, block: int = BLOCK) -> None:
        self.block = block
        self.capacity_blocks = max(1, capacity_tokens // block)
        self.served: list[Served] = []
        self._blocks: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()

    def serve(self, body: dict[str, Any]) -> Served:
        """Account one request: how much of it the cache held; then cache its blocks."""
        tokens = request_tokens(body)
        keys: list[bytes] = []
        parent = b""
        for start in range(0, len(tokens) - self.block + 1, self.block):
            chunk = "\x00".join(token for token, _ in tokens[start : start + self.block])
            parent = hashlib.sha256(parent + chunk.encode()).digest()
            keys.append(parent)
        with self._lock:
            hits = 0
            while hits < len(keys) and keys[hits] in self._blocks:
                hits += 1
            for key in keys:
                self._blocks[key] = None
                self._blocks.move_to_end(key)
            while len(self._blocks) > self.capacity_blocks:
                self._blocks.popitem(last=False)
            cached = hits * self.block
            spec = body.get("response_format", {}).get("json_schema", {})
            served = Served(
                schema=spec.get("name", ""),
                tokens=len(tokens),
                cached=cached,
                image_tokens=sum(image for _, image in tokens),
                cached_image_tokens=sum(image for _, image in tokens[:cached]),
            )
            self.served.append(served)
        return served

    def responder(self, answer: Callable[[Any], Reply]) -> Callable[[Any], Reply]:
        """``answer``'s replies, with the usage this cache accounts for each chat request."""

        def respond(body: Any) -> Reply:
            reply = answer(body)
            if isinstance(body, dict) and "messages" in body and reply.status == 200:
                served = self.serve(body)
                usage = reply.body.setdefault("usage", {})
                usage["prompt_tokens"] = served.tokens
                usage["total_tokens"] = served.tokens + usage.get("completion_tokens", 0)
                usage["prompt_tokens_details"] = {"cached_tokens": served.cached}
            return reply

        return respond
