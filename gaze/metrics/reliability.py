"""Agreement between two annotators beyond chance: Krippendorff's alpha for nominal values and
Cohen's kappa, from the tables that sum over units (so a bootstrap resamples tables, not data).

Krippendorff's alpha (nominal, two coders, no value missing within a unit): every unit with
values (c, k) adds 1 to ``o[c, k]`` and 1 to ``o[k, c]`` (a unit with c = k adds 2 to
``o[c, c]``). With ``n_c`` the row sums and ``n`` their total,

    alpha = 1 - (n - 1) * sum_{c != k} o[c, k] / sum_{c != k} n_c * n_k

undefined (None) when every value is one category (no disagreement is possible).

Cohen's kappa from a 2x2 table ``t[a, b]`` (counts of units coded a by the first and b by the
second annotator): kappa = (p_o - p_e) / (1 - p_e), undefined when p_e = 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def coincidences(pairs: Sequence[tuple[str, str]], categories: Sequence[str]) -> np.ndarray:
    """The (C, C) coincidence matrix of units coded ``(first, second)``."""
    index = {c: i for i, c in enumerate(categories)}
    o = np.zeros((len(categories), len(categories)))
    for first, second in pairs:
        o[index[first], index[second]] += 1
        o[index[second], index[first]] += 1
    return o


def alpha_nominal(o: np.ndarray) -> float | None:
    """Krippendorff's alpha of a coincidence matrix (see the module's docstring)."""
    n_c = o.sum(axis=1)
    n = float(n_c.sum())
    observed = float(o.sum() - np.trace(o))
    expected = float(n * n - (n_c**2).sum())  # sum over c != k of n_c * n_k
    if expected <= 0:
        return None
    return 1.0 - (n - 1.0) * observed / expected


def kappa(t: np.ndarray) -> float | None:
    """Cohen's kappa of a square agreement table (see the module's docstring)."""
    total = float(t.sum())
    if total <= 0:
        return None
    p_o = float(np.trace(t)) / total
    p_e = float((t.sum(axis=1) * t.sum(axis=0)).sum()) / (total * total)
    if p_e >= 1.0:
        return None
    return (p_o - p_e) / (1.0 - p_e)
