"""A folder of test data made once per test run, however many pytest-xdist workers ask for it.

Each worker builds its own session-scoped fixtures, so a slow one (a forge and two benchmark
runs: 40-50 s on a 2-core machine) was built by both workers, each taking a core from the
other's tests. Here the first worker to ask makes the folder while the others wait on a file
lock, and all of them then read the same folder: its users must not write into it (copy it
first, as the viewer tests do for the runs they change)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def made_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]
) -> Path:
    """The folder ``name`` that ``make(folder)`` filled, in this test run's temporary folder
    (the workers' common parent under xdist). A make that failed leaves no finished folder:
    the next worker to ask makes it again, and fails as visibly."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):  # basetemp is this worker's own folder
        root = root.parent
    folder, finished = root / name, root / f"{name}.finished"
    with FileLock(str(root / f"{name}.lock")):
        if not finished.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed make left
            folder.mkdir()
            make(folder)
            finished.touch()
    return folder
