"""The regression wall: each test runs a README promise the way the README shows it (the CLI as
a child process, the LangGraph dev server, ``gaze.diagnose``), so a later change that breaks an
older promise fails here. ``tests/README.md`` lists promise -> test."""

from __future__ import annotations

import os
import subprocess
import sys

MODEL_ENV = ("GAZE_MODEL", "GAZE_BASE_URL", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")


def gaze_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """``gaze ARGS`` in a child process, with no model settings but ``env``'s."""
    full_env = {k: v for k, v in os.environ.items() if k not in MODEL_ENV}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "gaze", *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )
