"""Package namespaces whose members are imported on first use.

A package ``__init__`` that imports every member makes each submodule import pay for all of
them: ``from gaze.schema.inputs import ClipInput`` loaded the codebook and every report model, and
``from gaze.agents import grounding`` every agent, before ``gaze diagnose`` could send its first
request. Type checkers still see the members through the package's ``TYPE_CHECKING`` imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_members(package: str, members: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``members`` maps each public name to the
    submodule (relative to ``package``) that defines it."""

    def __getattr__(name: str) -> object:
        submodule = members.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{submodule}"), name)

    return __getattr__
