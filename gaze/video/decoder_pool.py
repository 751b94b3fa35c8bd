"""Decoding children that outlive one clip: a process that has decoded a clip has paid for its
start (about 0.3 s of imports) and for OpenCV's first use (about 0.2 s more on the first
decode); the next clip of the same process reuses it. Light on purpose (no cv2, numpy or
pydantic): ``gaze diagnose`` starts a child here before its own imports.

A child serves one clip at a time; it is returned after a clip that ended cleanly and dropped
after one that did not (killed, crashed, or cut short). At most MAX_BUSY clips decode at once
per process. A child whose parent exits sees its stdin close and exits too.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO

MAX_BUSY = max(2, os.cpu_count() or 2)
"""Clips decoding at once in this process; more clips in flight wait for a child. Each child
keeps about one core busy, and every child started costs half a second of CPU before its first
frame: on a 2-core machine, eight children started for eight clips in flight cost more than
they gave (`bench/fleet_throughput.py`)."""
MAX_IDLE = MAX_BUSY
"""Children kept waiting for the next clip."""
CHILD_BLAS_THREADS = "1"
"""NumPy's OpenBLAS threads in a decoding child (unless the environment already sets
``BLAS_THREADS_ENV``). The child multiplies no matrices, but OpenBLAS starts a thread per core
as NumPy loads, and they spin: the child's imports took 0.42-0.44 s of CPU against 0.29-0.33 s
with one thread, on the cores the parent's start wants."""
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"
REPLY_PIPE_BYTES = 1 << 20
"""The child's reply pipe holds this much (Linux, where a pipe can be widened; 64 KiB is the
default there and elsewhere). A window's message is about 150 KB (its JPEGs and grid): in a
64 KiB pipe the decoding thread waited at each window until the parent's reader thread had
taken the rest, and that thread waits for the parent's interpreter lock, held by LangGraph's
import while a run starts: a 60 s clip's decoding lost 45-60 ms that way, which its last
observer request waited for. 1 MiB is the most an unprivileged process may ask for by default
(``/proc/sys/fs/pipe-max-size``); a refusal leaves the pipe as it was."""

_idle: list[Decoder] = []
_lock = threading.Lock()
_busy = threading.BoundedSemaphore(MAX_BUSY)
_jobs_in = 0
"""Decoding jobs handed to ``job_threads`` and not yet over (``enter_job``, ``leave_job``)."""
_executors: dict[str, ThreadPoolExecutor] = {}


def _executor(name: str) -> ThreadPoolExecutor:
    with _lock:
        if name not in _executors:
            _executors[name] = ThreadPoolExecutor(MAX_BUSY, thread_name_prefix=f"gaze-{name}")
        return _executors[name]


def job_threads() -> ThreadPoolExecutor:
    """The threads that run decoding jobs (``DecodeJob.run``, which waits for a child and then
    reads it), MAX_BUSY of them: a run of many clips in flight queues its jobs here. In the
    event loop's default executor, they filled its few threads waiting for a child, and every
    other ``to_thread`` (the first frame grounding needs, the response cache, the report
    files) queued behind them: with 96 clips in flight the first request went out after 12.1 s
    instead of 2.1 s (``bench/fleet_throughput.py --slots 4 --servers 1 --kinds queue
    --min-clips 96``)."""
    return _executor("decode")


def enter_job() -> bool:
    """Count in a decoding job about to be handed to ``job_threads``; True when it finds a
    thread and a child at once (fewer than MAX_BUSY jobs were in: each holds at most one of
    each), so its child can read the clip's first frame before anything waits on it. False: it
    queues behind other clips, and their first frames are read in the parent
    (``first_frame_threads``). Pair with ``leave_job`` once the job is over or cancelled."""
    global _jobs_in
    with _lock:
        _jobs_in += 1
        return _jobs_in <= MAX_BUSY


def leave_job() -> None:
    global _jobs_in
    with _lock:
        _jobs_in -= 1


def first_frame_threads() -> ThreadPoolExecutor:
    """The threads that read the first frames of clips whose decoding waits for a child
    (``gaze.video.first_frame``), MAX_BUSY of them, for the same reason: a run of many clips
    queues every clip's first frame at once, and in the default executor the SDK's first
    connection (its address lookup runs there) waited behind all of them: 144 clips in flight,
    the first request reached the servers 1 s after it was sent (``bench/fleet_throughput.py
    --slots 16 --servers 3 --kinds queue``)."""
    return _executor("first-frame")


def widen_pipe(pipe: IO[bytes] | None, size: int) -> int | None:
    """Ask the kernel for a pipe buffer of ``size`` bytes; the size it now has, or None where
    pipes cannot be resized (not Linux) or the request was refused (a user over the kernel's
    quota of pipe memory)."""
    setting = getattr(fcntl, "F_SETPIPE_SZ", None)
    if pipe is None or setting is None:
        return None
    try:
        return int(fcntl.fcntl(pipe.fileno(), setting, size))
    except OSError:
        return None


class Decoder:
    """One child process (``python -m gaze.video.decode_process``)."""

    def __init__(self) -> None:
        import gaze

        package_root = str(Path(gaze.__file__).resolve().parents[1])
        env = dict(os.environ)  # the child imports this very gaze, wherever it came from
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        env.setdefault(BLAS_THREADS_ENV, CHILD_BLAS_THREADS)
        self.errors: IO[bytes] | None = None
        with contextlib.suppress(OSError):  # a full disk: the child's last words are lost
            self.errors = tempfile.TemporaryFile()  # noqa: SIM115  (closed with the child)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gaze.video.decode_process"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors or subprocess.DEVNULL,
            env=env,
        )
        widen_pipe(self.proc.stdout, REPLY_PIPE_BYTES)

    @property
    def requests(self) -> IO[bytes]:
        assert self.proc.stdin is not None
        return self.proc.stdin

    @property
    def replies(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def alive(self) -> bool:
        return self.proc.poll() is None

    def last_words(self) -> str:
        """The last line the child wrote on stderr, or its exit code."""
        lines: list[str] = []
        if self.errors is not None:
            self.errors.seek(0)
            lines = self.errors.read()[-2000:].decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"exit code {self.proc.returncode}"

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()

    def close(self) -> None:
        """End the child and release its pipes."""
        self.kill()
        with self.proc:  # closes the pipes and reaps the child
            pass
        if self.errors is not None:
            self.errors.close()


def take(stop: Callable[[], bool]) -> Decoder | None:
    """An idle child, or a new one, once fewer than MAX_BUSY are decoding; None when ``stop()``
    turns true while waiting."""
    while not _busy.acquire(timeout=0.1):
        if stop():
            return None
    try:
        with _lock:
            while _idle:
                decoder = _idle.pop()
                if decoder.alive():
                    return decoder
                decoder.close()
        return Decoder()
    except BaseException:
        _busy.release()
        raise


def give_back(decoder: Decoder, reusable: bool) -> None:
    """A child ``take`` gave: kept for the next clip when its last one ended cleanly, else
    ended."""
    try:
        with _lock:
            if reusable and decoder.alive() and len(_idle) < MAX_IDLE:
                _idle.append(decoder)
                return
        decoder.close()
    finally:
        _busy.release()


@atexit.register
def _close_idle() -> None:
    with _lock:
        idle = list(_idle)
        _idle.clear()
    for decoder in idle:
        decoder.close()


def warm() -> None:
    """Start a child now, so that it has imported what it needs when the first clip comes (a
    child that cannot start now is started, or reported, when a clip needs it)."""
    with _lock:
        if _idle:
            return
    try:
        decoder = Decoder()
    except OSError:
        return
    with _lock:
        _idle.append(decoder)
