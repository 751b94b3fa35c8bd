"""A run's decoded clips: each clip is decoded once per run, however many nodes ask, and its
frames belong to that run (they are dropped when the run closes its store).

Frames never travel in graph state: state holds the path, nodes ask the run's store. Decoding
and the pixel pass run in worker threads (never on the event loop: LangGraph's server refuses
blocking calls there); concurrent askers await the same task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np

import gaze  # noqa: F401  (quiets OpenCV logging before cv2 is imported)
from gaze.errors import GazeInputError
from gaze.schema.events import Event
from gaze.video.clip import DecodedClip, check_video_path, open_clip
from gaze.video.evidence import detect
from gaze.video.frames import resize_max_side
from gaze.video.signals import SignalSeries, compute_signals
from gaze.video.windows import SamplingSettings

PixelEvidence = tuple[SignalSeries, list[Event]]
T = TypeVar("T")


def read_first_frame(path: str, max_side: int) -> np.ndarray:
    """The clip's first frame, read on its own (milliseconds), so grounding need not wait for
    the whole clip to decode. Raises GazeInputError for anything that is not a video."""
    check_video_path(Path(path))
    cap = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
    try:
        ok, frame = cap.read() if cap.isOpened() else (False, None)
    finally:
        cap.release()
    if not ok or frame is None:
        raise GazeInputError(
            f"{path} is not a video gaze can open "
            "(unknown format, unsupported codec, or corrupt file)"
        )
    return resize_max_side(frame, max_side)


def measure_pixels(clip: DecodedClip) -> PixelEvidence:
    """Pixel signals and candidate events of a decoded clip (pure CPU work)."""
    signals = compute_signals(clip.analysis)
    return signals, detect(clip.analysis, signals)


class ClipStore:
    """Decoded clips, first frames and pixel evidence of one run, each computed once."""

    def __init__(self, sampling: SamplingSettings) -> None:
        self.sampling = sampling
        self.decodes = 0
        """How many decodes this store started (benchmarks and tests count them)."""
        self._tasks: dict[tuple[str, str], asyncio.Future[Any]] = {}

    async def _once(self, kind: str, path: str, start: Callable[[], Awaitable[T]]) -> T:
        key = (kind, path)  # one run names its clip one way; no file-system call on the loop
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.ensure_future(start())
            self._tasks[key] = task
        result: T = await asyncio.shield(task)  # one asker cancelled never cancels the others
        return result

    async def first_frame(self, path: str) -> np.ndarray:
        max_side = self.sampling.max_side
        return await self._once(
            "first", path, lambda: asyncio.to_thread(read_first_frame, path, max_side)
        )

    async def decoded(self, path: str) -> DecodedClip:
        """The decoded clip (frames encoded once), decoding it if no node has asked yet."""

        def start() -> Awaitable[DecodedClip]:
            self.decodes += 1
            return asyncio.to_thread(open_clip, path, self.sampling, encode=True)

        return await self._once("decode", path, start)

    async def pixel_evidence(self, path: str) -> PixelEvidence:
        async def start() -> PixelEvidence:
            return await asyncio.to_thread(measure_pixels, await self.decoded(path))

        return await self._once("pixels", path, start)

    def close(self) -> None:
        """Drop every decoded frame (tasks still running are cancelled)."""
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()


def window_frames(clip: DecodedClip, window_indices: list[int]) -> list[tuple[float, bytes]]:
    """(time, jpeg) of every sampled frame of the given windows, in time order; in grid mode,
    (time of its first tile, grid jpeg) of each window."""
    if clip.grids:
        return [
            (w.timestamps_s[0], clip.grids[w.index])
            for w in clip.windows
            if w.index in window_indices
        ]
    out = []
    for window in clip.windows:
        if window.index in window_indices:
            out += [
                (t, clip.jpegs[i])
                for i, t in zip(window.frame_indices, window.timestamps_s, strict=True)
            ]
    return out
