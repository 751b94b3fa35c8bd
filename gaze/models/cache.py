"""A content-addressed response cache on disk (SQLite), so a rerun repeats no call.

The key covers provider, model, endpoint, every message (text verbatim, images by hash), the
schema and the sampling parameters; it never contains credentials.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path

from platformdirs import user_cache_dir

from gaze.models.protocol import ImagePart, ModelReply, ModelRequest
from gaze.redact import public_url


def default_cache_dir() -> Path:
    return Path(os.environ.get("GAZE_CACHE_DIR") or user_cache_dir("gaze"))


def public_endpoint(base_url: str | None) -> str:
    """The endpoint without user info, query or key-like path parts (where tokens hide)."""
    return public_url(base_url) if base_url else ""


def cache_key(provider: str, model: str, endpoint: str, request: ModelRequest) -> str:
    messages = [
        [m.role, [p.text if not isinstance(p, ImagePart) else f"image:{p.sha256}" for p in m.parts]]
        for m in request.messages
    ]
    payload = {
        "provider": provider,
        "model": model,
        "endpoint": endpoint,
        "messages": messages,
        "schema": request.json_schema,
        "schema_name": request.schema_name,
        "temperature": request.temperature,
        "max_output_tokens": request.max_output_tokens,
        "sample": request.sample,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Thread-safe SQLite store of replies by key. Nothing touches the disk until the first
    look-up, and the async methods do their I/O in a worker thread, never on the event loop."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = Path(folder or default_cache_dir())
        self.path = self.folder / "responses.sqlite"
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        # called with the lock held
        if self._db is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, text TEXT NOT NULL, "
                "input_tokens INTEGER, output_tokens INTEGER)"
            )
            db.commit()
            self._db = db
        return self._db

    def get(self, key: str) -> ModelReply | None:
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT text, input_tokens, output_tokens FROM replies WHERE key = ?", (key,)
                )
                .fetchone()
            )
        return None if row is None else ModelReply(row[0], row[1] or 0, row[2] or 0)

    def put(self, key: str, reply: ModelReply) -> None:
        with self._lock:
            db = self._connection()
            db.execute(
                "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?)",
                (key, reply.text, reply.input_tokens, reply.output_tokens),
            )
            db.commit()

    async def aget(self, key: str) -> ModelReply | None:
        return await asyncio.to_thread(self.get, key)

    async def aput(self, key: str, reply: ModelReply) -> None:
        await asyncio.to_thread(self.put, key, reply)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
