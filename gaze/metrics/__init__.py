"""Agreement statistics, bootstrap intervals and progress metrics (pure functions)."""
