"""Encoding forge v2 clips with PyAV (its wheels carry libx264 and libvpx): h264 in MP4 and VP9
in WebM at three qualities, written atomically, with a frame's timestamp exactly k/fps."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from gaze.atomic import mode_for


@dataclass(frozen=True)
class Codec:
    encoder: str
    suffix: str
    crf: dict[str, int]
    """Constant-quality setting per quality level (higher is worse)."""
    options: dict[str, str]


CODECS = {
    "h264": Codec("libx264", ".mp4", {"high": 18, "medium": 28, "low": 36}, {"preset": "veryfast"}),
    "vp9": Codec(
        "libvpx-vp9",
        ".webm",
        {"high": 24, "medium": 40, "low": 54},
        {"b": "0", "deadline": "realtime", "cpu-used": "8", "row-mt": "1"},
    ),
}


def encode(frames: list[np.ndarray], path: Path, fps: float, codec: str, quality: str) -> None:
    """Write BGR ``frames`` to ``path`` with ``codec`` at ``quality``."""
    import av  # only the forge encodes; decoding goes through OpenCV

    spec = CODECS[codec]
    rate = Fraction(fps).limit_denominator(1001)
    fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", suffix=spec.suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with av.open(str(tmp), mode="w") as container:
            stream = container.add_stream(spec.encoder, rate=rate)
            assert isinstance(stream, av.VideoStream)
            stream.width, stream.height = frames[0].shape[1], frames[0].shape[0]
            stream.pix_fmt = "yuv420p"
            stream.codec_context.time_base = 1 / rate
            stream.options = {"crf": str(spec.crf[quality]), **spec.options}
            for k, frame in enumerate(frames):
                picture = av.VideoFrame.from_ndarray(frame, format="bgr24")
                picture.pts = k
                for packet in stream.encode(picture):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
        os.chmod(tmp, mode_for(path))  # mkstemp makes 0600: the umask's mode, as any file
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
