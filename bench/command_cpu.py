"""CPU seconds a running command and its child processes have used so far, read from ``/proc``.

The latency bench asks at each request the stand-in server receives: where a whole command
waits for CPU rather than for replies, the CPU it has used by its router's request, against
the two cores' seconds up to then, says so in a figure (``graph_latency.py --hops``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

PROC = Path("/proc")
TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (which may hold spaces), or None once the
    process is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _parents() -> dict[int, list[int]]:
    """Every live process's children, by parent pid."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir(PROC):
        if entry.isdigit() and (fields := _stat_fields(int(entry))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def tree_cpu_s(root: int) -> float | None:
    """User and system seconds of ``root``, of its descendants still running (or not yet
    reaped), and of those its processes have reaped; None when ``root`` is gone or there is no
    ``/proc`` (not Linux). The clock ticks make it exact to 0.01 s."""
    children = _parents()
    pending, ticks, seen = [root], 0, False
    while pending:
        pid = pending.pop()
        fields = _stat_fields(pid)
        if fields is None:
            continue
        seen = True
        # fields 14-17 of stat(5), counted from the state (the 3rd): utime stime cutime cstime
        ticks += sum(int(fields[k]) for k in (11, 12, 13, 14))
        pending += children.get(pid, [])
    return ticks / TICKS_PER_S if seen else None


class RunningCommand:
    """The command being timed (its pid while it runs), so that a server thread can read what
    it has used when a request arrives."""

    def __init__(self) -> None:
        self._pid: int | None = None
        self._requests = 0
        self._lock = threading.Lock()

    def started(self, pid: int) -> None:
        with self._lock:
            self._pid, self._requests = pid, 0

    def count_request(self) -> int:
        """How many requests the running command had made before this one (0 for its first)."""
        with self._lock:
            self._requests += 1
            return self._requests - 1

    def ended(self) -> None:
        with self._lock:
            self._pid = None

    def cpu_s(self) -> float | None:
        with self._lock:
            pid = self._pid
        return None if pid is None or not PROC.is_dir() else tree_cpu_s(pid)
