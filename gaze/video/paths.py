"""What can be a video file, checked before any decoder sees it (no OpenCV, no NumPy: the
parent process checks a clip's path before its first request)."""

from __future__ import annotations

from pathlib import Path

from gaze.errors import GazeInputError

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}


def check_video_path(path: Path) -> None:
    """Reject what cannot be a video before handing it to the decoder."""
    if not path.exists():
        if path.is_symlink():
            raise GazeInputError(f"{path} is a link that leads to no file (a loop, or gone)")
        raise GazeInputError(f"no such file: {path}")
    if path.is_dir():
        raise GazeInputError(f"{path} is a directory, not a video file")
    if path.stat().st_size == 0:
        raise GazeInputError(f"{path} is empty (0 bytes)")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        raise GazeInputError(f"{path} is an image, not a video (pass it as --initial-frame)")
