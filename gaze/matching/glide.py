"""The glide protocol (compatibility with GLiDE's published numbers), per clip.

Contract:
  inputs   N predicted and M reference events; ``rating`` (N, M) judge ratings on a 0-5 scale
           (a [0, 1] judge's s counts as 5s); spans in seconds.
  matching Hungarian assignment maximising the sum of ratings; all min(N, M) assigned pairs are
           kept, whatever their rating.
  output   per pair its rating and continuous-time IoU |A∩B| / (|A| + |B| - |A∩B|) in seconds.
  metrics  pooled over the dataset (micro) by the caller: P = sum(s) / (5 sum N),
           R = sum(s) / (5 sum M).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gaze.matching.assignment import assign

VERSION = 1
"""This protocol as implemented here; bumped whenever a change alters a number it gives
(scores files record it, so two files say whether they can be compared)."""


@dataclass
class GlideMatch:
    pairs: list[tuple[int, int]] = field(default_factory=list)
    rating: list[float] = field(default_factory=list)
    iou: list[float] = field(default_factory=list)


def match(
    rating: np.ndarray,
    iou: np.ndarray,
    pred_keys: Sequence[Hashable] | None = None,
    ref_keys: Sequence[Hashable] | None = None,
) -> GlideMatch:
    """All min(N, M) Hungarian pairs on the rating; ties on the rating go to the larger IoU,
    then to the events' canonical order (``gaze.matching.assignment``)."""
    out = GlideMatch()
    if rating.size == 0:
        return out
    for i, j in assign(rating, iou, pred_keys, ref_keys):
        out.pairs.append((i, j))
        out.rating.append(float(rating[i, j]))
        out.iou.append(float(iou[i, j]))
    return out
