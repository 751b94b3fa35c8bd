"""A content-addressed response cache on disk (SQLite), so a rerun repeats no call.

The key covers provider, model, endpoint, every message (text verbatim, images by hash), the
schema and the sampling parameters; it never contains credentials.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from gaze.errors import GazeInputError
from gaze.models.protocol import ModelReply, ModelRequest, TextPart, media_ref, sha256_hex
from gaze.redact import public_url

LATER_COLUMNS = (("refusal", "TEXT"), ("cached_tokens", "INTEGER"))
"""Columns added since the first store (a batch run's store of raw replies keeps refusals)."""

BUSY_TIMEOUT_S = 30.0
"""How long a writer waits for another process holding the cache (SQLite busy timeout)."""


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return any(w in text for w in ("not a database", "malformed", "corrupt", "quick_check"))


def default_cache_dir() -> Path:
    return Path(os.environ.get("GAZE_CACHE_DIR") or user_cache_dir("gaze"))


def public_endpoint(base_url: str | None) -> str:
    """The endpoint without user info, query or key-like path parts (where tokens hide)."""
    return " ".join(public_url(url) for url in base_url.split()) if base_url else ""


def cache_key(provider: str, model: str, endpoint: str, request: ModelRequest) -> str:
    messages = [
        [
            m.role,
            [p.text if isinstance(p, TextPart) else media_ref(p) for p in m.parts],
        ]
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
    return _digest(payload)


def finding_key(provider: str, model: str, endpoint: str, finding: str) -> str:
    """The key a start-up check's ``finding`` about an endpoint is stored under (beside the
    replies: a rerun answered from the cache needs it, and no server)."""
    return _digest({"finding": finding, "provider": provider, "model": model, "endpoint": endpoint})


def _digest(payload: dict[str, Any]) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_hex(canonical.encode("utf-8"))


def _add_later_columns(db: sqlite3.Connection) -> None:
    """The columns a store written by an earlier gaze lacks (another process opening it at the
    same moment may add one first)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(replies)")}
    for name, kind in LATER_COLUMNS:
        if name in columns:
            continue
        try:
            db.execute(f"ALTER TABLE replies ADD COLUMN {name} {kind}")
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc):
                raise


class ResponseCache:
    """Thread-safe SQLite store of replies by key. Nothing touches the disk until the first
    look-up, and the async methods do their I/O in a worker thread, never on the event loop."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = Path(folder or default_cache_dir())
        self.path = self.folder / "responses.sqlite"
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._failed = False

    def _connection(self) -> sqlite3.Connection:
        # called with the lock held
        if self._db is None:
            self._db = self._open()
        return self._db

    def _unusable(self, exc: BaseException) -> GazeInputError:
        reason = getattr(exc, "strerror", None) or str(exc)
        return GazeInputError(
            f"the response cache at {self.folder} is not usable ({reason}); "
            "point GAZE_CACHE_DIR at a writable folder or run with --no-cache"
        )

    def _open(self) -> sqlite3.Connection:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise self._unusable(exc) from None
        try:
            return self._connect_when_free()
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and not _corrupt(exc):
                raise self._unusable(exc) from None
            aside = self._move_aside(exc)
            try:
                return self._connect()
            except sqlite3.DatabaseError as again:
                raise self._unusable(again) from None
            finally:
                print(
                    f"gaze: warning: the response cache {self.path} was damaged ({exc}); "
                    f"moved to {aside.name} and started afresh",
                    file=sys.stderr,
                )

    def _connect_when_free(self) -> sqlite3.Connection:
        """Connect, waiting out other processes that hold the file: switching to WAL and WAL
        recovery can report "locked" at once instead of calling SQLite's busy handler when
        several processes open one cache together."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        pause = 0.02
        while True:
            try:
                return self._connect()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(pause)
                pause = min(0.5, pause * 2)

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=BUSY_TIMEOUT_S)
        try:
            db.execute("PRAGMA journal_mode=WAL")  # many processes may share one cache
            later = "".join(f", {name} {kind}" for name, kind in LATER_COLUMNS)
            db.execute(
                "CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, text TEXT NOT NULL, "
                f"input_tokens INTEGER, output_tokens INTEGER{later})"
            )
            _add_later_columns(db)
            db.execute("SELECT count(*) FROM replies").fetchone()
            if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("quick_check failed")
            db.commit()
        except BaseException:
            db.close()
            raise
        return db

    def _move_aside(self, reason: BaseException) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"responses.damaged-{stamp}-{os.getpid()}.sqlite")
        for suffix in ("", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            if source.exists():
                try:
                    source.replace(Path(str(aside) + suffix))
                except OSError as exc:
                    raise self._unusable(exc) from reason
        return aside

    def open(self) -> None:
        """Open (or create) the store now: an unusable folder fails here, in one line."""
        with self._lock:
            self._connection()

    def get(self, key: str) -> ModelReply | None:
        with self._lock:
            row = (
                self._connection()
                .execute(
                    "SELECT text, input_tokens, output_tokens, refusal, cached_tokens "
                    "FROM replies WHERE key = ?",
                    (key,),
                )
                .fetchone()
            )
        if row is None:
            return None
        return ModelReply(row[0], row[1] or 0, row[2] or 0, row[3], row[4] or 0)

    def put(self, key: str, reply: ModelReply) -> None:
        """Store a reply; a store that fails mid-run (a full disk) is turned off with a warning
        rather than losing the run's work."""
        with self._lock:
            if self._failed:
                return
            db = self._connection()
            try:
                db.execute(
                    "INSERT OR REPLACE INTO replies (key, text, input_tokens, output_tokens, "
                    "refusal, cached_tokens) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        reply.text,
                        reply.input_tokens,
                        reply.output_tokens,
                        reply.refusal,
                        reply.cached_tokens,
                    ),
                )
                db.commit()
            except sqlite3.DatabaseError as exc:
                self._failed = True
                print(
                    f"gaze: warning: cannot write the response cache at {self.folder} ({exc}); "
                    "this run goes on without caching",
                    file=sys.stderr,
                )

    async def aget(self, key: str) -> ModelReply | None:
        return await asyncio.to_thread(self.get, key)

    async def aput(self, key: str, reply: ModelReply) -> None:
        await asyncio.to_thread(self.put, key, reply)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
