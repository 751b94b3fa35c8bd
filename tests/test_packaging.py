"""Every data file the package reads is listed in its package data: a wheel built from
pyproject.toml carries it (the viewer's script and styles were missing from wheels once, which
an editable install never shows)."""

from __future__ import annotations

import fnmatch
import subprocess
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_data_file_of_the_package_is_in_its_package_data():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["gaze"]
    tracked = subprocess.run(
        ["git", "ls-files", "gaze"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    data = [Path(p).relative_to("gaze").as_posix() for p in tracked if not p.endswith(".py")]
    assert data, "no data files found: is this a git checkout?"
    left_out = [p for p in data if not any(fnmatch.fnmatch(p, pat) for pat in patterns)]
    assert left_out == []
