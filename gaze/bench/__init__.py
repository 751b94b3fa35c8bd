"""Benchmark tooling: manifests, batch runs, baselines, leaderboards, the synthetic clip forge."""
