"""The openai SDK's look-ups of the legacy ``httpx`` module, and when gaze imports it first.

The SDK (its ``_httpx2`` shim) looks ``httpx`` up in ``sys.modules`` when it builds a client
and while it parses every reply. Other work imports httpx in worker threads (the graph module,
through LangGraph; another clip's client): a look-up that lands half-way through that import
fails with AttributeError, which read as a malformed reply and cost a retry (one CLI run in
four), or failed a clip outright in a Ray worker. An ``import`` statement waits for a half-done
import to finish, so once httpx is imported whole no look-up can see one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_deferred: ContextVar[bool] = ContextVar("gaze_legacy_httpx_deferred", default=False)


def settle_legacy_httpx() -> None:
    """Import httpx whole (20-40 ms, once per process)."""
    with contextlib.suppress(ImportError):
        import httpx  # noqa: F401


def settle_on_build() -> None:
    """What building a client does: import httpx now, unless its builder does it later
    (``deferred``)."""
    if not _deferred.get():
        settle_legacy_httpx()


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Clients built in here leave the import to their builder, which must call
    ``settle_legacy_httpx`` on the event loop's thread (where the SDK parses replies) before
    any other thread may import httpx. ``gaze.api`` does so once the first request is out and
    before the graph module loads: imported with the clients, httpx delayed that request."""
    token = _deferred.set(True)
    try:
        yield
    finally:
        _deferred.reset(token)
