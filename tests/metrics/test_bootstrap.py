import numpy as np

from gaze.metrics.bootstrap import (
    bootstrap_ratios,
    group_sums,
    percentile_interval,
    resample_counts,
)


def test_resample_counts_draw_whole_groups():
    counts = resample_counts(5, 200, seed=1)
    assert counts.shape == (200, 5) and (counts.sum(axis=1) == 5).all()
    assert np.array_equal(counts, resample_counts(5, 200, seed=1))
    assert not np.array_equal(counts, resample_counts(5, 200, seed=2))


def test_group_sums_and_ratio_bootstrap_match_a_loop():
    rng = np.random.default_rng(0)
    num = rng.random((12, 2))
    den = np.ones((12, 2))
    groups = [f"g{i % 4}" for i in range(12)]
    sums, names = group_sums(num, groups)
    assert names == ["g0", "g1", "g2", "g3"]
    assert np.allclose(sums[1], num[[1, 5, 9]].sum(axis=0))
    samples = bootstrap_ratios(num, den, groups, 300, seed=3)
    counts = resample_counts(4, 300, seed=3)
    den_g, _ = group_sums(den, groups)
    b = 17
    expected = (counts[b] @ sums) / (counts[b] @ den_g)
    assert np.allclose(samples[b], expected)
    ci = percentile_interval(samples)
    point = num.sum(axis=0) / den.sum(axis=0)
    assert (ci[:, 0] <= point).all() and (point <= ci[:, 1]).all()


def test_undefined_resamples_are_ignored():
    num = np.array([[1.0], [0.0]])
    den = np.array([[1.0], [0.0]])  # only the first group has the metric defined
    samples = bootstrap_ratios(num, den, ["a", "b"], 200, seed=0)
    assert np.isnan(samples).any() and not np.isnan(samples).all()
    assert percentile_interval(samples)[0].tolist() == [1.0, 1.0]
