"""Decoded clips kept in memory for the nodes of a run (frames never travel in graph state).

Graph state holds only a reference (path + sampling settings); any node can get the frames back,
and a clip evicted from this small cache (or a restarted server) is simply decoded again.
Decoding and pixel evidence run in background threads: the graph starts them when the clip
loads and waits for them only where their results are needed, so they overlap the first
backbone calls instead of delaying them.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
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

MAX_CLIPS = 4
T = TypeVar("T")

_lock = threading.Lock()
_decode_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gaze-decode")
_pixel_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gaze-pixels")
_decodes: OrderedDict[tuple[Any, ...], Future[DecodedClip]] = OrderedDict()
_pixel_jobs: OrderedDict[tuple[Any, ...], Future[tuple[SignalSeries, list[Event]]]] = OrderedDict()


def _key(path: str, settings: SamplingSettings) -> tuple[Any, ...]:
    stat = Path(path).stat()
    return (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size, settings)


def _remember(
    table: OrderedDict[tuple[Any, ...], Future[T]], key: tuple[Any, ...], start: Any
) -> Future[T]:
    with _lock:
        job = table.get(key)
        if job is None:
            job = start()
            table[key] = job
            while len(table) > MAX_CLIPS:
                table.popitem(last=False)
        else:
            table.move_to_end(key)
        return job


def start_decode(path: str, settings: SamplingSettings) -> Future[DecodedClip]:
    """Decode the clip (frames encoded once) in the background, or return the job already
    running or done for it."""
    return _remember(
        _decodes,
        _key(path, settings),
        lambda: _decode_pool.submit(open_clip, path, settings, encode=True),
    )


def decoded(path: str, settings: SamplingSettings) -> DecodedClip:
    """The decoded clip, waiting for its decode if it is still running."""
    return start_decode(path, settings).result()


async def decoded_async(path: str, settings: SamplingSettings) -> DecodedClip:
    return await asyncio.wrap_future(start_decode(path, settings))


def first_frame(path: str, max_side: int) -> np.ndarray:
    """The clip's first frame, read on its own (milliseconds), so grounding need not wait for
    the whole clip to decode. Raises GazeInputError for anything that is not a video."""
    check_video_path(Path(path))
    stat = Path(path).stat()
    return _first_frame(str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size, max_side)


@lru_cache(maxsize=MAX_CLIPS)
def _first_frame(path: str, mtime_ns: int, size: int, max_side: int) -> np.ndarray:
    # read once per file version: load_clip checks it, both grounding nodes use it
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


def window_frames(clip: DecodedClip, window_indices: list[int]) -> list[tuple[float, bytes]]:
    """(time, jpeg) of every sampled frame of the given windows, in time order."""
    out = []
    for window in clip.windows:
        if window.index in window_indices:
            out += [
                (t, clip.jpegs[i])
                for i, t in zip(window.frame_indices, window.timestamps_s, strict=True)
            ]
    return out


def _measure(path: str, settings: SamplingSettings) -> tuple[SignalSeries, list[Event]]:
    clip = decoded(path, settings)
    signals = compute_signals(clip.analysis)
    return signals, detect(clip.analysis, signals)


def pixel_evidence(
    path: str, settings: SamplingSettings
) -> Future[tuple[SignalSeries, list[Event]]]:
    """Pixel signals and candidate events of a clip, computed once in the background (after its
    decode); the router collects them when it needs them."""
    return _remember(
        _pixel_jobs, _key(path, settings), lambda: _pixel_pool.submit(_measure, path, settings)
    )


def clear() -> None:
    """Forget every decoded clip and pixel job (benchmarks measure cold runs with this)."""
    with _lock:
        _decodes.clear()
        _pixel_jobs.clear()
