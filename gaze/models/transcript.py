"""Every model exchange on record: what each call sent (the prompt's text, its images as
references to the frames), what came back (the raw reply, the parsed result or why it did not
parse), and what it took (attempt, tokens, latency, cache hit).

A run opens one transcript per clip (``recording``); ``gaze.models.structured.ask`` notes each
attempt in the transcript open in its task (a context variable: a clip's graph nodes and their
calls inherit it, other clips' tasks do not see it). Nothing is written while the clip runs (no
file I/O on the event loop); the run writes the transcript once the clip ends, failed or not.

File format (``TRANSCRIPT_FORMAT``): JSON lines; the first line is the header
``{"format", "kind": "gaze.transcript", "clip_id", "exchanges"}``, every further line one
``Exchange``, in the order the requests were sent. Text passes through ``gaze.redact`` first:
no key or secret URL part is ever written.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typing_extensions import TypedDict

from gaze.errors import GazeInputError
from gaze.models.caller import CallRecord
from gaze.models.protocol import ImagePart, ModelRequest, TextPart, VideoPart
from gaze.redact import redact

TRANSCRIPT_FORMAT = 1
KIND = "gaze.transcript"
REPLY_KEPT_CHARS = 20_000
"""A reply longer than this is kept as its first this many characters (and its length)."""


class Exchange(TypedDict):
    """One attempt of one call, as the transcript keeps it."""

    seq: int
    """Position in the clip's transcript, in the order the requests were sent."""
    role: str
    """The agent role that asked (grounding, observer, router, specialist, critic, judge...)."""
    label: str
    """What the call was about, in the agent's words (a window, a segment and dimension, an
    axis); empty where the role says it all."""
    model: str
    """``provider:model`` of the backbone that answered."""
    schema: str
    """Name of the structured answer asked for."""
    attempt: int
    """1 for a call's first request, 2.. for its retries (each retry is its own exchange)."""
    sample: int
    temperature: float
    messages: list[dict[str, Any]]
    """``{"role", "parts"}`` per message; a part is ``{"text": ...}``, ``{"image": sha256,
    "label": the frame's time label}`` or ``{"video": [sha256 of each frame], "label": its
    time span}`` (the frames' bytes are not copied)."""
    reply: str | None
    """The raw reply text (None: no reply came)."""
    reply_chars: int
    refusal: str | None
    parsed: Any
    """The reply parsed and validated (None when it did not parse or none came)."""
    error: str
    """Why this attempt gave no usable answer (empty when it did)."""
    ok: bool
    cache_hit: bool
    """Answered from gaze's response cache: nothing was sent."""
    input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    latency_s: float
    sent_at: float
    """Unix time the request was handed over (the cache's answer time for a hit)."""


@dataclass
class Transcript:
    """One clip's exchanges, kept in memory until the clip ends."""

    clip_id: str
    exchanges: list[Exchange] = field(default_factory=list)

    def text(self) -> str:
        """The transcript file's contents (see the module's docstring)."""
        ordered = sorted(self.exchanges, key=lambda e: (e["sent_at"], e["seq"]))
        for seq, exchange in enumerate(ordered, 1):
            exchange["seq"] = seq
        header = {
            "format": TRANSCRIPT_FORMAT,
            "kind": KIND,
            "clip_id": self.clip_id,
            "exchanges": len(ordered),
        }
        lines = [json.dumps(header, ensure_ascii=False)]
        lines += [json.dumps(e, ensure_ascii=False, default=str) for e in ordered]
        return "\n".join(lines) + "\n"


_open: contextvars.ContextVar[Transcript | None] = contextvars.ContextVar(
    "gaze_transcript", default=None
)


@contextmanager
def recording(clip_id: str) -> Iterator[Transcript]:
    """Note every call made in this task (and the tasks it starts) in a new transcript."""
    transcript = Transcript(clip_id)
    token = _open.set(transcript)
    try:
        yield transcript
    finally:
        _open.reset(token)


def _parts(request: ModelRequest) -> list[dict[str, Any]]:
    messages = []
    for message in request.messages:
        parts: list[dict[str, Any]] = []
        label = ""
        for part in message.parts:
            if isinstance(part, ImagePart):
                parts.append({"image": part.sha256, "label": label})
            elif isinstance(part, VideoPart):
                frames = [f.sha256 for f in part.frames]
                parts.append({"video": frames, "label": label})
            elif isinstance(part, TextPart):
                parts.append({"text": redact(part.text)})
                label = part.text.strip() if len(part.text) < 40 else ""
        messages.append({"role": message.role, "parts": parts})
    return messages


def note(
    request: ModelRequest,
    record: CallRecord,
    *,
    label: str,
    attempt: int,
    reply: str | None = None,
    refusal: str | None = None,
    parsed: Any = None,
    error: str = "",
) -> None:
    """Add one attempt to the transcript open in this task (nothing when none is open)."""
    transcript = _open.get()
    if transcript is None:
        return
    kept = None if reply is None else redact(reply[:REPLY_KEPT_CHARS])
    transcript.exchanges.append(
        Exchange(
            seq=len(transcript.exchanges) + 1,
            role=request.role,
            label=label,
            model=record["model"],
            schema=request.schema_name,
            attempt=attempt,
            sample=request.sample,
            temperature=request.temperature,
            messages=_parts(request),
            reply=kept,
            reply_chars=0 if reply is None else len(reply),
            refusal=None if refusal is None else redact(refusal),
            parsed=parsed,
            error=redact(error),
            ok=not error,
            cache_hit=record["cache_hit"],
            input_tokens=record["input_tokens"],
            output_tokens=record["output_tokens"],
            cached_input_tokens=record["cached_input_tokens"],
            latency_s=record["latency_s"],
            sent_at=round(time.time() - record["latency_s"], 4),
        )
    )


def transcript_name(clip_id: str) -> str:
    """A clip's transcript file in a run's ``transcripts/`` folder."""
    return f"{clip_id}.jsonl"


def read_transcript(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and exchanges of a transcript file; one clear error for a damaged or newer
    one."""
    try:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GazeInputError(f"{path}: not a readable transcript ({exc})") from exc
    if not lines or not isinstance(lines[0], dict) or lines[0].get("kind") != KIND:
        raise GazeInputError(f"{path}: not a gaze transcript (no header line)")
    header = lines[0]
    if int(header.get("format", 0)) > TRANSCRIPT_FORMAT:
        raise GazeInputError(
            f"{path}: transcript format {header['format']} is newer than this gaze reads "
            f"({TRANSCRIPT_FORMAT}); upgrade gaze"
        )
    return header, lines[1:]
