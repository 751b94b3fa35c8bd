"""The settings whose default comes from an environment variable: read here and nowhere else
(the run context, the command line's start-up and the bench commands all ask this module)."""

from __future__ import annotations

import os

ENVIRONMENT = {"model": "GAZE_MODEL", "base_url": "GAZE_BASE_URL", "prices_file": "GAZE_PRICES"}
"""Setting -> the environment variable that gives its default."""


def from_environment(name: str) -> str | None:
    """The environment's value for a setting (None when unset or empty)."""
    return os.environ.get(ENVIRONMENT[name]) or None


def model_of(option: str | None) -> str | None:
    """The run's default model: the one the caller named (``--model``, the context's field),
    else ``GAZE_MODEL``. Whether a run has a model is this, not None, everywhere."""
    return option or from_environment("model")
