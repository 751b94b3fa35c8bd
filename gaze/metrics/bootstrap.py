"""Cluster bootstrap of ratio metrics, vectorised.

Every headline metric is a ratio of per-clip sums, num / den (a mean over eligible clips has
num = value * [eligible], den = [eligible]; a pooled rate has num = hits, den = trials). Clips
are grouped by ``condition_id``; each resample draws groups with replacement, so the interval
respects that clips of one condition are not independent. A resample whose denominator is 0
leaves the metric undefined there (NaN), and percentiles ignore it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

LOW, HIGH = 2.5, 97.5


def group_sums(values: np.ndarray, groups: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """(C, K) per-clip values -> (G, K) per-group sums, with the group order."""
    names = sorted(set(groups))
    index = {g: i for i, g in enumerate(names)}
    rows = np.array([index[g] for g in groups], dtype=np.int64)
    out = np.zeros((len(names), values.shape[1]))
    np.add.at(out, rows, values)
    return out, names


def resample_counts(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """(B, G): how often each group is drawn in each resample (each row sums to G)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_groups, size=(n_boot, n_groups))
    flat = draws + (np.arange(n_boot) * n_groups)[:, None]
    return np.bincount(flat.ravel(), minlength=n_boot * n_groups).reshape(n_boot, n_groups)


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def bootstrap_ratios(
    num: np.ndarray, den: np.ndarray, groups: Sequence[str], n_boot: int, seed: int
) -> np.ndarray:
    """(B, K) resampled ratios of (C, K) per-clip numerators and denominators."""
    num_g, _ = group_sums(num, groups)
    den_g, _ = group_sums(den, groups)
    counts = resample_counts(len(num_g), n_boot, seed).astype(np.float64)
    return ratio(counts @ num_g, counts @ den_g)


def percentile_interval(samples: np.ndarray) -> np.ndarray:
    """(K, 2) percentile 95% intervals (NaN where no resample defined the metric)."""
    out = np.full((samples.shape[1], 2), np.nan)
    for k in range(samples.shape[1]):
        column = samples[:, k]
        column = column[~np.isnan(column)]
        if column.size:
            out[k] = np.percentile(column, [LOW, HIGH])
    return out
