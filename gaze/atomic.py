"""Atomic file output: a reader sees the old file or the whole new one, never a partial write."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from gaze.errors import GazeInputError


def check_writable(path: str | Path) -> Path:
    """Fail early (before any work) when ``path`` cannot be written."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise GazeInputError(f"cannot write {path}: it is a directory")
    if not parent.is_dir():
        raise GazeInputError(f"cannot write {path}: folder {parent} does not exist")
    if path.exists() and not os.access(path, os.W_OK):
        raise GazeInputError(f"cannot write {path}: file is read-only")
    # Permission bits do not tell the whole story (root, read-only mounts, /proc): try it.
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
    except OSError as exc:
        raise GazeInputError(
            f"cannot write {path}: folder {parent} is not writable ({exc.strerror})"
        ) from exc
    os.close(fd)
    os.unlink(probe)
    return path


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temp file in the same folder and a rename."""
    path = check_writable(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise GazeInputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
