"""A user's clip as a probe's canvas: its frames (up to a cap), frame rate and codec, and the
writer that re-encodes a variant the way the clip was encoded where PyAV can (H.264 for MP4,
MOV, MKV and AVI; VP9 for WebM; anything else, a GIF included, as H.264 in MP4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from gaze.bench.forge_common import encode
from gaze.errors import GazeInputError

MIN_SECONDS = 3.0
"""A clip shorter than this leaves no room for an injection clear of its ends (1 s each)."""
VP9_SUFFIXES = (".webm",)
QUALITY = "high"
"""The re-encode's quality (crf 18 in H.264): an untouched original goes through the same
encode, so a method judged on its variants is judged against the same encoder's output."""


@dataclass
class Footage:
    """The frames a probe starts from (the original's first ``max_seconds``, even-sided)."""

    path: Path
    frames: list[np.ndarray]
    fps: float
    codec: str
    """``h264`` or ``vp9``: what the variants are encoded with."""
    suffix: str
    """``.mp4`` or ``.webm``."""
    _motion: np.ndarray | None = field(default=None, repr=False)

    @property
    def duration_s(self) -> float:
        return len(self.frames) / self.fps

    def motion(self) -> np.ndarray:
        """Mean grey difference of each frame to the one before (frame 0: 0), on 160 x 120
        thumbnails; measured once, whichever of the clip's variants asks first."""
        if self._motion is None:
            greys = [
                cv2.cvtColor(
                    cv2.resize(f, (160, 120), interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2GRAY
                )
                for f in self.frames
            ]
            diffs = [0.0] + [
                float(cv2.absdiff(a, b).mean()) for a, b in zip(greys, greys[1:], strict=False)
            ]
            self._motion = np.asarray(diffs)
        return self._motion


def codec_for(path: Path) -> tuple[str, str]:
    """(codec, suffix) of a variant of ``path``."""
    return ("vp9", ".webm") if path.suffix.lower() in VP9_SUFFIXES else ("h264", ".mp4")


def load_footage(path: Path, max_seconds: float) -> Footage:
    """The clip's first ``max_seconds`` of frames (cropped to even sides: H.264 needs them).
    A file that is not a video, or one shorter than ``MIN_SECONDS``, is one line."""
    capture = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
    try:
        if not capture.isOpened():
            raise GazeInputError(f"{path} is not a video gaze can open")
        fps = float(capture.get(cv2.CAP_PROP_FPS) or 0.0)
        fps = fps if 1.0 <= fps <= 240.0 else 30.0
        frames: list[np.ndarray] = []
        while len(frames) < round(max_seconds * fps):
            ok, frame = capture.read()
            if not ok or frame is None:
                break
            height, width = frame.shape[:2]
            frames.append(np.ascontiguousarray(frame[: height - height % 2, : width - width % 2]))
    finally:
        capture.release()
    if len(frames) < MIN_SECONDS * fps:
        raise GazeInputError(
            f"{path.name} is {len(frames) / fps:.1f} s long; a probe needs at least "
            f"{MIN_SECONDS:.0f} s to inject into"
        )
    if min(frames[0].shape[:2]) < 16:
        raise GazeInputError(f"{path.name} is too small to re-encode ({frames[0].shape[1]} px)")
    codec, suffix = codec_for(path)
    return Footage(path, frames, fps, codec, suffix)


def write_variant(frames: list[np.ndarray], target: Path, footage: Footage) -> None:
    """Encode ``frames`` at the footage's rate and codec, atomically."""
    try:
        encode(frames, target, footage.fps, footage.codec, QUALITY)
    except (OSError, ValueError) as exc:  # PyAV's errors are both; the temp file is gone
        reason = getattr(exc, "strerror", None) or exc
        raise GazeInputError(f"cannot encode {target.name} as {footage.codec}: {reason}") from exc
