"""The Wilson interval against values worked out by hand."""

import pytest

from gaze.metrics.proportion import wilson_interval


def test_wilson_matches_known_values():
    # worked by hand: p = 0.8, z = 1.96, n = 10 gives (0.4902, 0.9433)
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.49016, abs=1e-4) and high == pytest.approx(0.94332, abs=1e-4)
    # all successes: the interval does not collapse to a point
    low, high = wilson_interval(20, 20)
    assert high == 1.0 and low == pytest.approx(0.83887, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_refuses_impossible_counts():
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
