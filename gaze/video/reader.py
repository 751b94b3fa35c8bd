"""Reading a video file's frames in order, converting only what is asked for.

Every frame of a clip is looked at (``gaze.video.steps``), but only one in three is analysed and
fewer are sampled for the model. OpenCV's reader converts every decoded picture to BGR; on 720p
clips that conversion cost a quarter of the pixel pass. Here (PyAV, the same FFmpeg decoders) a
picture hands out grey levels straight from its luma plane, nearly free for the 8-bit YUV
pictures that video encoders write, and is converted to BGR only when a caller asks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import av
import av.logging
import cv2
import numpy as np
from av.video.reformatter import VideoReformatter

from gaze.errors import GazeInputError
from gaze.video.ahead import Ahead
from gaze.video.frames import fitted_size

# FFmpeg's own messages (a damaged packet, a missing reference) would interleave with gaze's
# one-line errors and progress; what matters reaches the caller as missing frames or an error.
av.logging.set_level(None)

LUMA_FIRST = {
    "yuv420p",
    "yuvj420p",
    "yuv422p",
    "yuvj422p",
    "yuv444p",
    "yuvj444p",
    "nv12",
    "nv21",
    "gray",
}
"""8-bit pixel formats whose first plane is luma, one byte per pixel."""
FULL_RANGE = {"yuvj420p", "yuvj422p", "yuvj444p", "gray"}
JPEG_RANGE = 2
"""FFmpeg's AVCOL_RANGE_JPEG: luma uses 0-255 rather than 16-235."""
LIMITED_TO_GREY = np.clip(np.round((np.arange(256) - 16) * 255 / 219), 0, 255).astype(np.uint8)
"""Studio-range luma (16-235) to the 0-255 grey levels of the BGR picture it converts to (the
chroma terms cancel in BT.601 grey), so thresholds on grey differences keep their meaning."""


class Converters:
    """One stream's colour converters. A frame's own ``reformat`` builds a new FFmpeg scaling
    context every call (0.3 ms, more than converting a 320x240 frame); one per output size,
    kept for the stream, reuses its context (the analysis frames and the frames sent to models
    are scaled to two sizes, frame after frame)."""

    def __init__(self) -> None:
        self.whole = VideoReformatter()
        self._scaled: dict[tuple[int, int], VideoReformatter] = {}

    def scaled(self, size: tuple[int, int]) -> VideoReformatter:
        """The converter that scales to ``size`` (width, height)."""
        if size not in self._scaled:
            self._scaled[size] = VideoReformatter()
        return self._scaled[size]


class Picture:
    """One decoded frame: grey samples from its luma plane, BGR on demand (converted once per
    size: a clip's first frame is both its initial frame and a sampled one)."""

    def __init__(self, frame: av.VideoFrame, converters: Converters | None = None) -> None:
        self._frame = frame
        self._converters = converters or Converters()
        self._bgr: np.ndarray | None = None
        self._scaled: dict[tuple[int, int], np.ndarray] = {}
        self.width, self.height = frame.width, frame.height

    def bgr(self) -> np.ndarray:
        """The whole frame as (height, width, 3) uint8 BGR."""
        if self._bgr is None:
            whole = self._converters.whole.reformat(self._frame, format="bgr24")
            self._bgr = whole.to_ndarray()
        return self._bgr

    def bgr_within(self, max_side: int) -> np.ndarray:
        """The frame as BGR with its longest side at most ``max_side``: scaled and converted in
        one step (area averaging) rather than converted whole and then shrunk, and the same way
        for every frame (measures compare frames). A 1080x1920 frame brought to 768 took 1.9
        ms so, against 12 ms converted whole, halved (``cv2.pyrDown``) and then shrunk, and it
        is the closer of the two to an exact area average of the whole frame (46 dB PSNR to
        ``cv2.resize(..., INTER_AREA)`` of it, against 32-35 dB for any factor above 2)."""
        size = fitted_size(self.width, self.height, max_side)
        if size == (self.width, self.height):
            return self.bgr()
        if size not in self._scaled:
            scaled = self._converters.scaled(size).reformat(
                self._frame, width=size[0], height=size[1], format="bgr24", interpolation="AREA"
            )
            self._scaled[size] = scaled.to_ndarray()
        return self._scaled[size]

    def grey_sample(self, step: int) -> np.ndarray:
        """Grey levels (0-255) at every ``step``-th pixel both ways, as a contiguous array."""
        frame = self._frame
        name = frame.format.name
        if name in LUMA_FIRST:  # always, so that every frame's grey levels compare
            plane = frame.planes[0]
            luma = np.frombuffer(memoryview(plane), np.uint8).reshape(-1, plane.line_size)
            sample = luma[: self.height : step, : self.width : step]
            if name in FULL_RANGE or frame.color_range == JPEG_RANGE:
                return np.ascontiguousarray(sample)
            return cv2.LUT(sample, LIMITED_TO_GREY)
        sample = np.ascontiguousarray(self.bgr()[::step, ::step])
        return cv2.cvtColor(sample, cv2.COLOR_BGR2GRAY)


class VideoReader:
    """The first video stream of a file: the container's claims, then its frames in order.

    Raises GazeInputError (one line) when the file cannot be opened as a video. Packets that fail
    to decode are skipped, and a container that breaks off ends the frames, as with OpenCV's
    reader: the caller compares the frames it got with the container's claims."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._container = av.open(str(self.path))
        except (av.FFmpegError, OSError, UnicodeDecodeError) as exc:
            raise _unopenable(self.path) from exc
        streams = self._container.streams.video
        if not streams or streams[0].codec_context is None:
            self._container.close()
            raise _unopenable(self.path)
        self._stream = streams[0]
        self._stream.thread_type = "AUTO"  # frame threads, as many as the CPUs this process may use
        self._ahead: Ahead[tuple[float | None, Picture]] | None = None

    def close(self) -> None:
        if self._ahead is not None:  # its thread may be in the container: stop it first
            self._ahead.close()
        self._container.close()

    def __enter__(self) -> VideoReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def claimed_fps(self) -> float:
        """The container's frame rate, NaN when it gives none."""
        stream = self._stream
        rate = stream.average_rate or stream.guessed_rate or stream.base_rate
        return float(rate) if rate else math.nan

    @property
    def claimed_count(self) -> int:
        """The container's frame count, estimated from its duration when it states none; 0 when
        neither is known."""
        stream = self._stream
        if stream.frames:
            return int(stream.frames)
        fps = self.claimed_fps
        if stream.duration and stream.time_base and math.isfinite(fps):
            return round(float(stream.duration * stream.time_base) * fps)
        container_duration = self._container.duration  # in AV_TIME_BASE units (microseconds)
        if container_duration and math.isfinite(fps):
            return round(container_duration / 1_000_000 * fps)
        return 0

    @property
    def codec(self) -> str:
        """The codec's FFmpeg name (h264, vp9, mjpeg): clearer in a report than a container tag."""
        return str(self._stream.codec_context.name)

    def pictures(self, ahead: int = 0) -> Iterator[tuple[float | None, Picture]]:
        """(presentation time in seconds from the stream's start, or None; the picture), in
        presentation order. With ``ahead``, decoding runs in a thread of its own, up to that
        many pictures ahead of the caller (``gaze.video.ahead``): for a caller that does work
        on every picture it takes, not for one that stops after a few."""
        if ahead <= 0:
            yield from self._decoded()
            return
        self._ahead = decoding = Ahead(self._decoded(), ahead, name="gaze-decode")
        try:
            yield from decoding
        finally:
            decoding.close()

    def _decoded(self) -> Iterator[tuple[float | None, Picture]]:
        stream = self._stream
        start = stream.start_time or 0
        base: Fraction | None = stream.time_base
        converters = Converters()
        try:
            packets = self._container.demux(stream)
            for packet in packets:
                try:
                    frames = packet.decode()
                except av.FFmpegError:
                    continue
                for frame in frames:
                    pts = frame.pts
                    t = float((pts - start) * base) if pts is not None and base else None
                    yield t, Picture(frame, converters)
        except av.FFmpegError:
            return  # the container itself breaks off (a truncated file)


def _unopenable(path: Path) -> GazeInputError:
    return GazeInputError(
        f"{path} is not a video gaze can open (unknown format, unsupported codec, or corrupt file)"
    )
