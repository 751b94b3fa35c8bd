"""Runs of consecutive True values in a boolean series (shared by the span detectors)."""

from __future__ import annotations

import numpy as np


def true_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """Inclusive (first, last) index pairs of every run of True in ``mask``."""
    padded = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return [(int(s), int(e) - 1) for s, e in zip(edges[::2], edges[1::2], strict=True)]


def near(index: int, spans: list[tuple[int, int]], margin: int = 1) -> bool:
    """True when ``index`` lies within ``margin`` frames of any inclusive span."""
    return any(s - margin <= index <= e + margin for s, e in spans)
