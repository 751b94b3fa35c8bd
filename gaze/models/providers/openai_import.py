"""Importing the openai SDK without the ``__init__``s of two type packages a chat call never reads.

``import openai`` runs ``openai.types``' ``__init__``, which imports every model of the whole
API (about 470 modules and 650 pydantic classes), and ``openai.lib`` reaches one tool type in
``openai.types.responses``, whose ``__init__`` imports all of the Responses API's. A chat
completion needs neither. With both deferred (``gaze.lazy.defer_package_init``), ``import
openai`` took 0.29 s of CPU against 0.53 s, and that import comes before a run's first
request. Anything that reads either package for more runs its ``__init__`` then: the Batch
API's resources do, and so does a caller's own ``from openai.types import ...``.
"""

from __future__ import annotations

import sys
import threading

from gaze.lazy import defer_package_init

DEFERRED_TYPES = ("openai.types", "openai.types.responses")
"""Deferred in this order, each before the package above it is imported: ``openai``'s own
``__init__`` then binds ``openai.types`` as it imports it."""

_lock = threading.Lock()


def defer_openai_types() -> None:
    """Defer ``DEFERRED_TYPES``' ``__init__``s unless the SDK is imported already; call it just
    before ``import openai``. Without the SDK installed nothing is deferred."""
    with _lock:
        if "openai" in sys.modules:
            return
        for package in DEFERRED_TYPES:
            if not defer_package_init(package, before_parent=True):
                return
