"""A clip's first frame on its own, as grounding sends it: read by the decoding child before it
decodes the rest (``gaze.video.decode_process``), or in a thread of the parent when every child
is busy with other clips (``gaze.video.store``)."""

from __future__ import annotations

from pathlib import Path

from gaze.errors import GazeInputError
from gaze.video.frames import encode_jpeg, resize_max_side
from gaze.video.paths import check_video_path


def read_first_frame(path: str, max_side: int) -> bytes:
    """The clip's first frame as a JPEG at ``max_side``, read and encoded in one go (a run of
    many clips queues every clip's first frame, and an encoding queued behind the others' reads
    held the first clip's grounding call until every first frame was read: 2.3 s for 144
    clips). Raises GazeInputError for anything that is not a video."""
    import cv2  # here, not at the top: a parent that gets its first frames from its children
    # never loads OpenCV before its first request

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
    return encode_jpeg(resize_max_side(frame, max_side))
