"""Opening a clip: one decoding pass that yields true metadata, windows and analysis frames.

Containers lie (an audio track longer than the video, a missing frame count, a truncated file),
so metadata comes from decoding; the container's claims are kept only to warn when they differ.
Every frame is converted once for the cheap per-frame differences (``gaze.video.steps``); only the
sampled and analysed ones are resized and measured further.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from gaze.errors import GazeInputError
from gaze.video.frames import analysis_size, encode_jpeg, fitted_size
from gaze.video.grid import window_grid
from gaze.video.paths import check_video_path
from gaze.video.spill import BlobStore, Frames, FrameStore
from gaze.video.steps import FrameSteps, StepMeter
from gaze.video.windows import SamplingSettings, Window, empty_windows, window_of

if TYPE_CHECKING:
    from gaze.schema.clip_info import ClipInfo
    from gaze.video.reader import VideoReader

MIN_SIDE = 8
MAX_SANE_FPS = 1000.0
FALLBACK_FPS = 30.0
PTS_PRECISION_S = 0.001
"""Resolution of the coarsest container timestamps (Matroska's whole milliseconds)."""
DECODE_AHEAD = 4
"""Pictures decoded ahead of the one being scaled, encoded and measured (``VideoReader.pictures``):
FFmpeg's frame threads keep decoding meanwhile instead of waiting for the next packet. On a
31 s 1620x1080 clip, ``open_clip`` took 1.49 s against 1.77 s (medians of 6 processes each),
and its whole command ended 0.23 s sooner; on 320x240 clips nothing changed. 2 to 16 ahead
were alike."""
BLUR_MEASURE_SIDE = 320

WindowSink = Callable[["Window", dict[int, bytes], bytes | None], None]
"""Called with (window, its frames' JPEGs by frame index, its grid JPEG in grid mode) as soon as
a window's last sampled frame is encoded."""


@dataclass
class AnalysisFrames:
    """Small frames at a capped rate, plus per-frame measures taken at a larger size."""

    times_s: np.ndarray
    thumbs: Frames  # N frames of (h, w, 3) uint8 BGR; only a few are in memory at a time
    sharpness: np.ndarray  # Laplacian variance on a BLUR_MEASURE_SIDE grey frame
    brightness: np.ndarray  # mean grey level, 0-255
    contrast: np.ndarray  # std of grey level
    steps: FrameSteps | None = None
    """Every decoded frame's differences to its predecessors (``gaze.video.steps``)."""


@dataclass
class DecodedClip:
    """Everything gaze needs from one pass over a video."""

    info_fields: dict[str, Any]
    """The clip's ``ClipInfo`` as plain values (``info`` is the model): a decoding child sends
    them without loading pydantic, whose import and first model took 0.1 s of its start."""
    windows: list[Window]
    initial_frame: np.ndarray
    analysis: AnalysisFrames
    flags: list[str] = field(default_factory=list)
    jpegs: Mapping[int, bytes] | BlobStore = field(default_factory=dict)
    """Frame index -> JPEG of the sampled frame at ``max_side`` (only when asked to encode)."""
    grids: Mapping[int, bytes] = field(default_factory=dict)
    """Window index -> the window's grid JPEG (grid mode only, ``gaze.video.grid``)."""

    @cached_property
    def info(self) -> ClipInfo:
        """Metadata of the analysed video, as decoding found it (the report's ``clip``)."""
        from gaze.schema.clip_info import ClipInfo

        return ClipInfo(**self.info_fields)


def _measure(frame: np.ndarray) -> tuple[float, float, float]:
    # OpenCV's one-pass mean and deviation: numpy's grey.std() converts the frame to float64
    # first, and cost a third of a decode
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    # the 3x3 aperture's responses to 8-bit levels are integers within +-1020: in int16 the
    # variance is the same to the last bit as in float64, in half the time
    _, sharp = cv2.meanStdDev(cv2.Laplacian(grey, cv2.CV_16S))
    mean, std = cv2.meanStdDev(grey)
    return float(sharp[0, 0]) ** 2, float(mean[0, 0]), float(std[0, 0])


def open_clip(
    path: str | Path,
    settings: SamplingSettings | None = None,
    *,
    encode: bool = False,
    on_window: WindowSink | None = None,
    on_thumb: Callable[[np.ndarray], None] | None = None,
) -> DecodedClip:
    """Decode ``path`` once; raise GazeInputError (one line) for anything unusable.

    With ``on_window`` (and ``encode``), each window is handed over while decoding goes on, as
    soon as a frame of a later window is sampled, with its JPEGs, which the result then does not
    keep; the windows still open at the end are not (they are in the result). A handed-over
    window equals the result's window of that index, except where a container's timestamps
    contradict its frame count; callers compare.
    ``on_thumb`` gets each analysis thumbnail as it is stored (the pixel signals can be
    measured while decoding goes on)."""
    settings = settings or SamplingSettings()
    path = Path(path)
    check_video_path(path)
    # PyAV is imported here, in the decoding child: a command's parent process imports this
    # module for its types and checks, and its first request should not wait for PyAV
    from gaze.video.reader import VideoReader

    with VideoReader(path) as reader:
        return _decode(reader, path, settings, encode, on_window if encode else None, on_thumb)


def frame_time(pts: float | None, index: int, fps: float, previous: float | None) -> float:
    """A decoded frame's time in seconds: its presentation time when that is sane (finite, not
    negative, after the previous frame's), else its index over the frame rate.

    Containers such as Matroska store timestamps in whole milliseconds, so frame 38 of a 24 fps
    clip comes back as 1.583 s, which lies in frame 37's interval; a timestamp within a
    millisecond of a frame instant k/fps is taken as that instant, so spans start and end on
    their frames."""
    if (
        pts is None
        or not math.isfinite(pts)
        or pts < 0
        or (previous is not None and pts <= previous)
    ):
        return index / fps
    instant = round(pts * fps) / fps
    return instant if abs(pts - instant) <= PTS_PRECISION_S else pts


def _decode(
    reader: VideoReader,
    path: Path,
    settings: SamplingSettings,
    encode: bool,
    on_window: WindowSink | None,
    on_thumb: Callable[[np.ndarray], None] | None = None,
) -> DecodedClip:
    warnings: list[str] = []
    flags: list[str] = []
    claimed_fps = reader.claimed_fps
    claimed_count = reader.claimed_count
    codec = reader.codec
    fps_ok = math.isfinite(claimed_fps) and 0 < claimed_fps <= MAX_SANE_FPS
    fps = claimed_fps if fps_ok else FALLBACK_FPS
    half_frame = 0.5 / fps

    sample_dt = settings.sample_interval_s
    analysis_dt = 1.0 / min(settings.analysis_fps, fps)
    next_sample, next_analysis = 0.0, 0.0
    sampled: list[tuple[int, float]] = []
    jpegs = BlobStore()
    grids: dict[int, bytes] = {}
    claimed_s = min(claimed_count / fps, settings.max_duration_s) if claimed_count > 0 else 0.0
    planned = len(empty_windows(claimed_s, settings)) if claimed_s > 0 else 0
    handed = _Handover(settings, jpegs, grids, on_window, planned)
    times: list[float] = []
    thumbs = _ThumbBuffer()
    measures: list[tuple[float, float, float]] = []
    initial: np.ndarray | None = None
    pts_times: list[float] = []
    thumb_size = (0, 0)
    meter = StepMeter()
    width = height = 0
    index = -1
    capped = False

    for pts, picture in reader.pictures(ahead=DECODE_AHEAD):
        index += 1
        t = frame_time(pts, index, fps, pts_times[-1] if pts_times else None)
        pts_times.append(t)
        if t > settings.max_duration_s:
            capped = True
            break
        want_sample = t >= next_sample - half_frame
        want_analysis = t >= next_analysis - half_frame
        # every frame is measured (one-frame glitches and exact change times need them all), from
        # its grey levels; only sampled and analysed frames are converted to colour
        meter.add_sample(t, picture.grey_sample(meter.step_for(picture.width, picture.height)))
        if not (want_sample or want_analysis or initial is None):
            continue
        if initial is None:
            width, height = picture.width, picture.height
            if min(height, width) < MIN_SIDE:
                raise GazeInputError(f"{path}: resolution {width}x{height} is too small to analyse")
            if max(height, width) > settings.max_input_side:
                warnings.append(
                    f"resolution {width}x{height} is above {settings.max_input_side} px; "
                    "frames were downscaled for analysis"
                )
                flags.append("downscaled")
            initial = picture.bgr_within(settings.max_side)
            thumb_size = analysis_size(
                *fitted_size(width, height, BLUR_MEASURE_SIDE),
                settings.analysis_short_side,
                settings.analysis_long_cap,
            )
        if want_sample:
            sampled.append((index, t))
            while next_sample - half_frame <= t:
                next_sample += sample_dt
            if encode:
                handed.before_sample(t)
                jpegs[index] = encode_jpeg(
                    picture.bgr_within(settings.max_side), settings.jpeg_quality
                )
                handed.sample(index, t)
        if want_analysis:
            measured = picture.bgr_within(BLUR_MEASURE_SIDE)
            times.append(t)
            thumb = thumbs.append(cv2.resize(measured, thumb_size, interpolation=cv2.INTER_AREA))
            if on_thumb is not None:
                on_thumb(thumb)
            measures.append(_measure(measured))
            while next_analysis - half_frame <= t:
                next_analysis += analysis_dt

    frame_count = index + 1 if not capped else index
    if frame_count <= 0 or initial is None:
        raise GazeInputError(
            f"{path} has no decodable frames (codec {codec or 'unknown'!r} unsupported, "
            "or the file is truncated)"
        )
    if not fps_ok:
        fps = _fps_from_pts(pts_times) or FALLBACK_FPS
        warnings.append(
            f"container gives no usable frame rate; using {fps:.3f} fps from timestamps"
        )
    if capped:
        warnings.append(
            f"clip is longer than {settings.max_duration_s:g} s; only the first "
            f"{settings.max_duration_s:g} s were analysed"
        )
        flags.append("duration_capped")
    elif claimed_count > 0 and abs(claimed_count - frame_count) > 1:
        warnings.append(
            f"container claims {claimed_count} frames but {frame_count} were decoded; "
            "using the decoded count"
        )
        flags.append("frame_count_mismatch")

    duration = frame_count / fps
    windows = empty_windows(duration, settings)
    for frame_index, t in sampled:
        w = min(window_of(t, settings), len(windows) - 1)
        windows[w].frame_indices.append(frame_index)
        windows[w].timestamps_s.append(round(t, 6))
    windows = [w for w in windows if w.frame_indices]

    info = dict(
        path=str(path),
        fps=round(fps, 6),
        frame_count=frame_count,
        duration_s=round(duration, 6),
        width=width,
        height=height,
        codec=codec,
        container_frame_count=claimed_count if claimed_count > 0 else None,
        warnings=warnings,
    )
    thumbs_arr = thumbs.store
    m = np.asarray(measures, dtype=np.float64).reshape(-1, 3)
    analysis = AnalysisFrames(
        times_s=np.asarray(times, dtype=np.float64),
        thumbs=thumbs_arr,
        sharpness=m[:, 0],
        brightness=m[:, 1],
        contrast=m[:, 2],
        steps=meter.result(),
    )
    if encode and settings.grid:
        for window in windows:
            if handed.released.get(window.index) == window:
                continue  # handed over as it is, with its grid
            grids.pop(window.index, None)
            if all(i in jpegs for i in window.frame_indices):
                grids[window.index] = _grid(window, jpegs, settings)
            # else: frames of it were handed over and not kept; the sink's owner makes its grid
    return DecodedClip(info, windows, initial, analysis, flags, jpegs, grids)


def _grid(window: Window, jpegs: BlobStore, settings: SamplingSettings) -> bytes:
    frames = [jpegs[i] for i in window.frame_indices]
    return window_grid(frames, window.timestamps_s, settings.max_side, settings.jpeg_quality)


class _Handover:
    """Windows handed to a sink while decoding goes on: window k is complete once a sample of a
    later window is decoded (samples come in time order)."""

    def __init__(
        self,
        settings: SamplingSettings,
        jpegs: BlobStore,
        grids: dict[int, bytes],
        sink: WindowSink | None,
        planned: int = 0,
    ) -> None:
        self.settings, self.jpegs, self.grids, self.sink = settings, jpegs, grids, sink
        self.planned = planned  # the container's window count (0: it states none)
        self.filling: Window | None = None
        self.released: dict[int, Window] = {}

    def before_sample(self, t: float) -> None:
        filling = self.filling
        if self.sink is None or filling is None or window_of(t, self.settings) <= filling.index:
            return
        if self.settings.grid:
            self.grids[filling.index] = _grid(filling, self.jpegs, self.settings)
        self.sink(
            filling,
            {i: self.jpegs[i] for i in filling.frame_indices},
            self.grids.get(filling.index),
        )
        for i in filling.frame_indices:  # handed over: the sink keeps them now
            self.jpegs.discard(i)
        self.released[filling.index] = filling
        self.filling = None

    def sample(self, index: int, t: float) -> None:
        if self.sink is None:
            return
        k = window_of(t, self.settings)
        if self.filling is None and k not in self.released and k > max(self.released, default=-1):
            ws = self.settings.window_s
            self.filling = Window(
                index=k,
                start_s=round(k * ws, 6),
                end_s=round((k + 1) * ws, 6),
                planned=self.planned,
            )
        if self.filling is None or k != self.filling.index:
            return  # a timestamp that went back: the final windows decide
        self.filling.frame_indices.append(index)
        self.filling.timestamps_s.append(round(t, 6))


class _ThumbBuffer:
    """Analysis thumbnails as they are decoded, in a store whose memory does not grow with the
    clip (``gaze.video.spill``); variable-resolution streams are brought to the first size."""

    def __init__(self) -> None:
        self.store = FrameStore()
        self.size: tuple[int, int] | None = None

    def append(self, thumb: np.ndarray) -> np.ndarray:
        """Store the thumbnail; returns it as stored."""
        if self.size is None:
            self.size = (thumb.shape[1], thumb.shape[0])
        elif (thumb.shape[1], thumb.shape[0]) != self.size:
            thumb = cv2.resize(thumb, self.size)
        self.store.append(thumb)
        return thumb


def _fps_from_pts(times: list[float]) -> float | None:
    if len(times) < 2:
        return None
    steps = np.diff(np.asarray(times))
    steps = steps[steps > 0]
    return float(1.0 / np.median(steps)) if steps.size else None
