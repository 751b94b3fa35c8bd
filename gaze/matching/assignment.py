"""Hungarian assignment that does not depend on the order events are listed in.

``linear_sum_assignment`` returns one optimum; when several assignments tie on the objective
it picks by position, so listing the same events in another order can change which pairs match
(and with them F1 and Sev@1). Here ties are broken canonically:

1. the primary objective is compared at 1e-9 (differences below that are float noise);
2. among assignments equal on it, the one with the larger total ``secondary`` wins (the
   similarity S, which the description metrics sum);
3. remaining ties are broken by the events' canonical order (their ``keys``), not by their
   positions in the input.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

PRIMARY_RESOLUTION = 1e-9
SECONDARY_RESOLUTION = 1e-3


def canonical_order(keys: Sequence[Hashable] | None, count: int) -> np.ndarray:
    """Indices that sort events by key (stable: equal keys keep their order)."""
    if keys is None:
        return np.arange(count)
    return np.array(sorted(range(count), key=lambda i: repr(keys[i])), dtype=np.intp)


def assign(
    primary: np.ndarray,
    secondary: np.ndarray | None = None,
    row_keys: Sequence[Hashable] | None = None,
    col_keys: Sequence[Hashable] | None = None,
) -> list[tuple[int, int]]:
    """Pairs (row, col) maximising ``primary`` then ``secondary`` (both (N, M), >= 0), ties
    broken by the keys' canonical order. Returns indices into the input order."""
    n, m = primary.shape
    if n == 0 or m == 0:
        return []
    rows, cols = canonical_order(row_keys, n), canonical_order(col_keys, m)
    first = np.rint(primary[np.ix_(rows, cols)] / PRIMARY_RESOLUTION)
    objective = first
    if secondary is not None:
        second = np.rint(secondary[np.ix_(rows, cols)] / SECONDARY_RESOLUTION)
        # the secondary total of any assignment is below this, so it can never outweigh one
        # unit of the primary
        scale = float(second.max(initial=0.0)) * min(n, m) + 1.0
        objective = first * scale + second
    picked_rows, picked_cols = linear_sum_assignment(objective, maximize=True)
    return [
        (int(rows[i]), int(cols[j]))
        for i, j in zip(picked_rows.tolist(), picked_cols.tolist(), strict=True)
    ]
