"""A proportion and its 95 % Wilson score interval (pure): detection rates over a few dozen
probes, where the normal approximation's interval leaves [0, 1] or has zero width at 0 and 1."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """(low, high) of the Wilson score interval of ``successes`` in ``n`` (0, 1 when n = 0)."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= n:
        raise ValueError(f"{successes} successes in {n} trials")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)
