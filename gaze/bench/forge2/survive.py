"""Whether a forged clip's frame edits survive its own encoding.

An edit the encoder erases is not a failure anyone can see, so its truth would be wrong: a
noise burst written at low-quality h264 decodes to the clean picture (measured on forge v2 seeds
1-3: every such burst kept at most 1 % of its change, every other edit at least 66 %). The share
kept by a frame is the projection of what decoding shows onto what the forge drew, both taken
against the clean render under the edit, in grey levels:

    kept_k = <decoded_k - clean_k, edited_k - clean_k> / |edited_k - clean_k|^2

1 when the edit decodes as drawn (encoding noise averages out of the projection), 0 when the
decoded frame is the clean one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np

from gaze.video.reader import VideoReader

SURVIVES = 0.5
"""A clip's edits count as visible when every edited frame keeps at least this share."""


def _grey(frame: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)


def kept_share(decoded: np.ndarray, edited: np.ndarray, clean: np.ndarray) -> float:
    """The share of the edit (``edited`` against ``clean``) that ``decoded`` shows."""
    want = _grey(edited) - _grey(clean)
    power = float((want * want).sum())
    if power == 0.0:
        return 1.0  # the edit changed nothing there; nothing can be lost
    return float(((_grey(decoded) - _grey(clean)) * want).sum() / power)


def surviving_share(
    path: Path, frames: Sequence[np.ndarray], clean: Mapping[int, np.ndarray]
) -> float:
    """The smallest share kept over the edited frames (``clean`` maps each edited frame's index to
    the picture under the edit); 1.0 for a clip without frame edits."""
    if not clean:
        return 1.0
    last = max(clean)
    shares: list[float] = []
    with VideoReader(path) as reader:  # the reader gaze decodes with
        for k, (_, picture) in enumerate(reader.pictures()):
            if k in clean:
                shares.append(kept_share(picture.bgr(), frames[k], clean[k]))
            if k == last:
                return min(shares)
    return 0.0  # an edited frame never decoded: nothing of it is visible
