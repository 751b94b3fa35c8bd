"""Probes run in a fresh interpreter, as a ``gaze`` command starts: nothing imported yet, so a
probe sees what a command loads, and when."""

from __future__ import annotations

import subprocess
import sys


def python_output(script: str, *args: str, timeout: float = 120) -> str:
    """What ``python -c script args`` prints on standard output; a probe that fails fails the
    test with the end of its standard error."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-800:]
    return done.stdout
