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


def check_not_input(target: str | Path, inputs: list[Path]) -> None:
    """Refuse an output path that is one of the inputs (``--out clip.mp4`` would destroy it)."""
    target = Path(target)
    for source in inputs:
        if target.exists() and source.exists() and os.path.samefile(target, source):
            raise GazeInputError(f"cannot write {target}: it is an input of this run")
        if target.resolve() == source.resolve():
            raise GazeInputError(f"cannot write {target}: it is an input of this run")


def inside(folder: str | Path, name: str) -> Path:
    """``folder / name``, refusing any name that would land outside ``folder`` (``..``, an
    absolute path, a link out): every file gaze names from its input stays where the user said."""
    root = Path(folder).resolve()
    target = (root / name).resolve()
    if target.parent != root:
        raise GazeInputError(f"{name!r} would be written outside {folder}; refused")
    return target


def _mode_for(path: Path) -> int:
    """The mode a new file gets from the umask, or the mode of the file being replaced."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temp file in the same folder and a rename."""
    path = check_writable(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, _mode_for(path))  # mkstemp makes 0600: keep the umask's or the old mode
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise GazeInputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
