"""Agreement statistics, bootstrap intervals and progress metrics (pure functions)."""

RESAMPLES = 1000
"""Bootstrap resamples of every interval gaze reports (``--bootstrap``), written once."""
