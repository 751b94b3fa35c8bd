"""A run's transcripts: every model exchange of a clip in ``RUNDIR/transcripts/CLIP.jsonl``
(format: ``gaze.models.transcript``), written when the clip ends, whether it gave a report or
failed: a failed clip's exchanges are what explains it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from gaze.atomic import atomic_write_text, inside
from gaze.models.transcript import recording, transcript_name

FOLDER = "transcripts"


def transcript_path(outdir: Path, clip_id: str) -> Path:
    """Where a clip's transcript lives in a run folder (never outside its ``transcripts/``)."""
    return inside(outdir / FOLDER, transcript_name(clip_id))


def write_transcript(outdir: Path, clip_id: str, text: str) -> Path:
    """Write one clip's transcript file (atomically) into the run folder."""
    target = transcript_path(outdir, clip_id)
    target.parent.mkdir(exist_ok=True)
    atomic_write_text(target, text)
    return target


@asynccontextmanager
async def transcribed(outdir: Path, clip_id: str) -> AsyncIterator[None]:
    """Record the calls made inside the block and write them when it ends (a clip that made no
    call, as the pixel method's, leaves no file)."""
    with recording(clip_id) as log:
        try:
            yield
        finally:
            if log.exchanges:
                await asyncio.to_thread(write_transcript, outdir, clip_id, log.text())
