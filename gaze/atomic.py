"""The output policy every command writes through: gaze never costs a user a file.

- An output is never one of the command's inputs, and never lands outside the folder named.
- A link, a named pipe, a folder or a special file is never replaced; a character device
  (``/dev/null``) is written through, as a shell redirection would; ``-`` is standard output.
- An existing file is replaced only when it is of the kind the command writes (JSON by a JSON
  output, JSON Lines by a JSONL output, a page gaze wrote by an HTML output): a user's notes or
  web page named by mistake stay as they were.
- Writes are atomic (a reader sees the old file or the whole new one) with the umask's mode or
  the replaced file's; a full disk is one line naming the file, and leaves no partial file.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from gaze.errors import GazeInputError

STDOUT = "-"
"""The output name that means standard output."""
GENERATOR_MARK = '<meta name="generator" content="gaze">'
"""In every HTML page gaze writes, so that a later run knows the page is its own to replace."""
EARLIER_PAGE_START = (
    "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
    "<meta name='viewport' content='width=device-width,initial-scale=1'>"
    "<link rel='icon' href='data:,'>"
)
"""How pages gaze wrote before GENERATOR_MARK began (2026-12-03): also its own to replace."""
SNIFF_BYTES = 1 << 16
"""How much of an existing file is read to tell what kind it is."""
KINDS = {"json": "a JSON file", "jsonl": "a JSON Lines file", "html": "a page gaze wrote"}
"""The kinds of output ``claim_output`` knows, and what an existing file must be to be replaced."""


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


def check_not_input(target: str | Path, inputs: Sequence[str | Path]) -> None:
    """Refuse an output path that is one of the inputs (``--out clip.mp4`` would destroy it)."""
    target = Path(target)
    for source in map(Path, inputs):
        if target.exists() and source.exists() and os.path.samefile(target, source):
            raise GazeInputError(f"cannot write {target}: it is an input of this run")
        if target.resolve() == source.resolve():
            raise GazeInputError(f"cannot write {target}: it is an input of this run")


def _looks_like(path: Path, kind: str) -> bool:
    """Whether the existing file ``path`` is of the ``kind`` gaze writes there."""
    with open(path, "rb") as handle:
        head = handle.read(SNIFF_BYTES)
    if not head.strip():
        return True  # an empty file holds nothing to lose
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if kind == "html":
        return GENERATOR_MARK in text or text.startswith(EARLIER_PAGE_START)
    first = text.lstrip()
    if kind == "jsonl":
        line = first.splitlines()[0]
        try:
            return isinstance(json.loads(line), dict)
        except (ValueError, RecursionError):
            return len(line) >= SNIFF_BYTES - 1 and line.startswith("{")
    return first[:1] in "{["  # json: a document too large to sniff whole is judged by its start


def claim_output(
    path: str | Path,
    kind: str,
    inputs: Sequence[str | Path] = (),
    outputs: Sequence[str | Path] = (),
) -> Path:
    """Check ``path`` before any work, as the output of ``kind`` (KINDS) of a run reading
    ``inputs`` and writing ``outputs`` besides; raises GazeInputError with the one-line reason
    when gaze must not write it."""
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}")
    path = Path(path)
    if to_stdout(path):
        if any(map(to_stdout, outputs)):
            raise GazeInputError("only one output can go to standard output (-)")
        return path
    check_not_input(path, inputs)
    for other in map(Path, outputs):
        if not to_stdout(other) and path.resolve() == other.resolve():
            raise GazeInputError(f"cannot write {path}: another output of this run goes there")
    if path.is_symlink():
        raise GazeInputError(
            f"cannot write {path}: it is a link, which gaze does not replace (name the file it "
            f"points to, or {STDOUT} for standard output)"
        )
    if path.exists():
        mode = path.stat().st_mode
        if stat.S_ISCHR(mode):
            return path  # /dev/null and the like: written through, never replaced
        if stat.S_ISDIR(mode):
            raise GazeInputError(f"cannot write {path}: it is a directory")
        if not stat.S_ISREG(mode):
            raise GazeInputError(f"cannot write {path}: it is not a regular file")
        if not _looks_like(path, kind):
            raise GazeInputError(
                f"{path} exists and is not {KINDS[kind]}; it is left as it is (remove it or "
                "name another file)"
            )
    return check_writable(path)


def claim_folder(path: str | Path, inputs: Sequence[str | Path] = (), *, empty: bool) -> Path:
    """Check a folder output before any work: not a link or a file, holding none of ``inputs``,
    and (``empty``) new or empty, since what a user keeps there would be mixed with or replaced
    by what the command writes."""
    path = Path(path)
    if path.is_symlink():
        raise GazeInputError(f"cannot write into {path}: it is a link, which gaze does not follow")
    if path.exists() and not path.is_dir():
        raise GazeInputError(f"cannot write into {path}: it is not a folder")
    for source in map(Path, inputs):
        if source.resolve().is_relative_to(path.resolve()) and path.exists():
            held = "is" if source.resolve() == path.resolve() else f"holds {source},"
            raise GazeInputError(f"cannot write into {path}: it {held} an input of this run")
    if empty and path.is_dir() and any(path.iterdir()):
        raise GazeInputError(
            f"{path} already holds files; gaze writes into a new or empty folder (nothing there "
            "was touched)"
        )
    return path


def to_stdout(path: str | Path | None) -> bool:
    """Whether ``path`` names standard output (a command then prints its summary on stderr)."""
    return path is not None and str(path) == STDOUT


def _write_through(path: Path, text: str) -> None:
    """Standard output, or a character device such as /dev/null: written, not replaced."""
    if to_stdout(path):
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise GazeInputError(_write_error(path, exc)) from exc


def _write_error(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return f"no space left on device writing {path} (nothing of it was left behind)"
    return f"cannot write {path}: {exc.strerror or exc}"


def inside(folder: str | Path, name: str) -> Path:
    """``folder / name``, refusing any name that would land outside ``folder`` (``..``, an
    absolute path, a link out): every file gaze names from its input stays where the user said."""
    root = Path(folder).resolve()
    target = (root / name).resolve()
    if target.parent != root:
        raise GazeInputError(f"{name!r} would be written outside {folder}; refused")
    return target


def mode_for(path: Path) -> int:
    """The mode a new file gets from the umask, or the mode of the file being replaced."""
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temp file in the same folder and a rename
    (``-``, or a character device, is written through)."""
    path = Path(path)
    if to_stdout(path) or (path.exists() and stat.S_ISCHR(path.stat().st_mode)):
        _write_through(path, text)
        return
    if path.is_symlink():
        raise GazeInputError(f"cannot write {path}: it is a link, which gaze does not replace")
    path = check_writable(path)
    try:
        with replacing(path) as tmp, open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        raise GazeInputError(_write_error(path, exc)) from exc


@contextlib.contextmanager
def replacing(path: Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A new file beside ``path`` to write (a video encoder needs a name with the right
    suffix); it replaces ``path`` with the umask's mode (or the old file's) when the block ends
    without an error, and is removed when it raises: a reader never sees half a file."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, mode_for(path))  # mkstemp makes 0600
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
