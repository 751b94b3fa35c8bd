"""Peers' file formats, read into gaze's manifest and predictions (``gaze convert``)."""
