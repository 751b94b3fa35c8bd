"""Writing frames to a video file atomically (a temp file in the same folder, then rename)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from gaze.atomic import replacing

MIN_ENCODER_SIDE = 16
"""FFmpeg's encoders inside OpenCV abort the process on tiny frames; refuse them first."""
FOURCC = {".avi": "MJPG", ".mkv": "MJPG", ".webm": "VP80"}
"""OpenCV's encoders by suffix; .mp4 is H.264 through PyAV instead (OpenCV's mp4v, MPEG-4
Part 2, is a codec no browser plays, and the demo's page said so to every newcomer)."""
MP4_QUALITY = "high"
"""forge v2's H.264 quality level for forge v1's .mp4 clips (near-lossless: crf 18)."""


def write_video(frames: list[np.ndarray], path: Path, fps: float) -> None:
    """Write BGR frames; .mp4 as H.264 (PyAV), .avi/.mkv/.webm through OpenCV's FFmpeg, .gif
    as an animation."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".mp4":
        from gaze.bench.forge_common import encode

        height, width = frames[0].shape[:2]
        if min(height, width) < MIN_ENCODER_SIDE or height % 2 or width % 2:
            raise ValueError(f"frames of {width}x{height} cannot be H.264 (even sides >= 16)")
        encode(frames, path, fps, "h264", MP4_QUALITY)
        return
    with replacing(path, suffix) as tmp:
        if suffix == ".gif":
            anim = cv2.Animation()
            anim.frames = list(frames)
            anim.durations = [round(1000 / fps)] * len(frames)
            if not cv2.imwriteanimation(str(tmp), anim):
                raise OSError(f"could not write {path}")
        elif suffix in FOURCC:
            height, width = frames[0].shape[:2]
            if min(height, width) < MIN_ENCODER_SIDE:
                raise ValueError(f"frames of {width}x{height} are too small for {suffix}")
            writer = cv2.VideoWriter(
                str(tmp), cv2.VideoWriter.fourcc(*FOURCC[suffix]), fps, (width, height)
            )
            if not writer.isOpened():
                raise OSError(f"could not open a video writer for {path}")
            for frame in frames:
                writer.write(frame)
            writer.release()
        else:
            raise ValueError(f"unsupported video suffix {suffix!r}")
