"""The cyclic garbage collector of a ``gaze`` command's own process (``gaze.diagnose`` in a
caller's process leaves the caller's collector as it was).

Nearly everything a command allocates while it imports (LangGraph, the SDKs, NumPy: a few
hundred thousand objects) lives until the process ends, and the collector walked those objects
again and again. At Python's default threshold (700 allocations) that was 0.26-0.30 s with the
interpreter lock held during a 60 s clip's ``gaze diagnose``; at ``COMMAND_GC_THRESHOLD``,
56-72 ms in about 20 collections, 25-40 ms of them before the clip's first request left (one
in the thread that builds the SDK clients) and two in the thread that loads the graph module
while the first replies are awaited. A command that loads its largest modules while it runs
(``diagnose`` with a model) therefore runs with the collector off until they have loaded
(``imports_done``): what they made is then frozen, moved where collections never look, and
the collector runs as usual from there on."""

from __future__ import annotations

import gc

COMMAND_GC_THRESHOLD = 50_000
"""Allocations between the young generation's collections in a ``gaze`` process (Python's
default: 700): a command's bursts of long-lived objects are walked far less often. Unreachable
cycles are still collected, up to this many allocations later."""


def tune(loads_while_running: bool) -> None:
    """Set this process's collector for a command; ``loads_while_running``: the command loads
    its largest modules as it runs, and calls ``imports_done`` once they have loaded."""
    gc.set_threshold(COMMAND_GC_THRESHOLD, *gc.get_threshold()[1:])
    if loads_while_running:
        gc.disable()


def imports_done() -> None:
    """The command's modules have loaded: freeze the objects that exist now and turn the
    collector back on (cheap to call again: it acts once)."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
