"""The signal meter's arithmetic: the faster median must give numpy's, bit for bit (camera
shifts feed thresholds, and a report must not change with the implementation)."""

from __future__ import annotations

import numpy as np
import pytest

from gaze.pixels.signals import exact_median


@pytest.mark.parametrize(
    ("shape", "dtype"),
    [((120, 160), np.float32), ((91, 121), np.float32), ((1, 1), np.float32), ((7, 2), np.float64)],
)
def test_the_median_is_numpys_to_the_last_bit(shape: tuple[int, int], dtype: type) -> None:
    rng = np.random.default_rng(7)
    for trial in range(300):
        values = (rng.standard_normal(shape) * rng.uniform(0.01, 40)).astype(dtype)
        if trial % 3 == 0:
            values = np.round(values)  # ties at the middle
        got, expected = exact_median(values), np.median(values)
        assert got.dtype == expected.dtype
        if expected == 0:  # either sign, by the partition's whim
            assert got.tobytes() == np.zeros(1, dtype).tobytes()
        else:
            assert got.tobytes() == expected.tobytes(), (trial, got, expected)


@pytest.mark.parametrize("count", [1, 2, 5, 6])
def test_a_nan_anywhere_makes_the_median_nan_as_numpys(count: int) -> None:
    for where in range(count):
        values = np.arange(count, dtype=np.float32)
        values[where] = np.nan
        assert np.isnan(exact_median(values))
        assert np.isnan(np.median(values))


def test_the_median_of_a_strided_channel_leaves_the_field_alone() -> None:
    field = np.random.default_rng(3).standard_normal((12, 16, 2)).astype(np.float32)
    kept = field.copy()
    assert exact_median(field[..., 1]) == np.median(field[..., 1])
    assert np.array_equal(field, kept)
