"""Benchmark tooling: manifests, batch runs, baselines, leaderboards, the synthetic clip forge."""

CLIPS_IN_FLIGHT = 2
"""Clips a batch run works on at once (``bench run --clips-in-flight``); each clip's own calls
run concurrently within the run's request limit."""
B2_SAMPLES = 5
"""Samples the self-consistency baseline b2 draws per clip (``bench run --samples``)."""
