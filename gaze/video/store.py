"""Decoded clips kept in memory for the nodes of a run (frames never travel in graph state).

Graph state holds only a reference (path + sampling settings); any node can get the frames back,
and a clip evicted from this small cache (or a restarted server) is simply decoded again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from gaze.video.clip import DecodedClip, open_clip
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
