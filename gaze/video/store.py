"""Decoded clips kept in memory for the nodes of a run (frames never travel in graph state).

Graph state holds only a reference (path + sampling settings); any node can get the frames back,
and a clip evicted from this small cache (or a restarted server) is simply decoded again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gaze.schema.events import Event
from gaze.video.clip import DecodedClip, open_clip
from gaze.video.evidence import detect
from gaze.video.signals import SignalSeries, compute_signals
from gaze.video.windows import SamplingSettings

MAX_CLIPS = 4

_lock = threading.Lock()
_clips: OrderedDict[tuple[Any, ...], DecodedClip] = OrderedDict()


def _key(path: str, settings: SamplingSettings) -> tuple[Any, ...]:
    stat = Path(path).stat()
    return (str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size, settings)


def decoded(path: str, settings: SamplingSettings) -> DecodedClip:
    """The decoded clip (frames encoded once), from the cache or freshly decoded."""
    key = _key(path, settings)
    with _lock:
        if key in _clips:
            _clips.move_to_end(key)
            return _clips[key]
    clip = open_clip(path, settings, encode=True)
    with _lock:
        _clips[key] = clip
        while len(_clips) > MAX_CLIPS:
            _clips.popitem(last=False)
    return clip


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


_pixel_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gaze-pixels")
_pixel_jobs: OrderedDict[tuple[Any, ...], Future[tuple[SignalSeries, list[Event]]]] = OrderedDict()


def _measure(clip: DecodedClip) -> tuple[SignalSeries, list[Event]]:
    signals = compute_signals(clip.analysis)
    return signals, detect(clip.analysis, signals)


def pixel_evidence(
    path: str, settings: SamplingSettings
) -> Future[tuple[SignalSeries, list[Event]]]:
    """Pixel signals and candidate events of a clip, computed once in the background: the graph
    starts them when the clip loads and collects them when the router needs them, so they cost
    no time on the critical path."""
    key = _key(path, settings)
    clip = decoded(path, settings)
    with _lock:
        job = _pixel_jobs.get(key)
        if job is None:
            job = _pixel_pool.submit(_measure, clip)
            _pixel_jobs[key] = job
            while len(_pixel_jobs) > MAX_CLIPS:
                _pixel_jobs.popitem(last=False)
        return job


def clear() -> None:
    """Forget every decoded clip and pixel job (benchmarks measure cold runs with this)."""
    with _lock:
        _clips.clear()
        _pixel_jobs.clear()
