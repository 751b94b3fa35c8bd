"""How many images the judges' requests carry: one home for what the judges send and what the
start-up check asks a server to take. Apart from the judges themselves, whose module loads the
report's models, which the check (before a run's first request) has no use for."""

from __future__ import annotations

from collections.abc import Collection

from gaze.models import defaults

MAX_JUDGE_FRAMES = defaults.JUDGE_FRAMES
"""Frames of the clip one PA/IA judge request shows (spread evenly), after the initial scene."""
MAX_PROGRESS_CHUNK = defaults.JUDGE_FRAMES
"""Frames one progress request shows."""


def judge_images(sections: Collection[str]) -> int:
    """The most images one judge or progress request of a run with these report ``sections``
    carries (0: no judges)."""
    judge = MAX_JUDGE_FRAMES + 1 if "pa_ia" in sections else 0  # + the initial scene
    progress = MAX_PROGRESS_CHUNK if "progress" in sections else 0
    return max(judge, progress)
