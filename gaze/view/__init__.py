"""The run viewer: a static site over benchmark runs (`gaze view`)."""
