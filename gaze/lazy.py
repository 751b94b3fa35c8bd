"""Package namespaces whose members are imported on first use.

A package ``__init__`` that imports every member makes each submodule import pay for all of
them: ``from gaze.schema.inputs import ClipInput`` loaded the codebook and every report model, and
``from gaze.agents import grounding`` every agent, before ``gaze diagnose`` could send its first
request. Type checkers still see the members through the package's ``TYPE_CHECKING`` imports.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
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


def defer_package_init(name: str, *, before_parent: bool = False) -> bool:
    """Put package ``name`` in ``sys.modules`` before its ``__init__`` has run, unless it is
    imported already: its submodules import as usual, and the first read of anything else on
    it (a name its ``__init__`` defines, ``dir()``) runs that ``__init__`` in place, once. True
    when deferred; False when ``name`` is imported already or is not a package.

    For a dependency's package whose ``__init__`` imports far more than is used: LangGraph's
    import reaches ``langsmith.types.run_select_field``, one enum, and ``langsmith.types``'s
    ``__init__`` imports about 160 generated pydantic models with it.

    ``before_parent``: find ``name`` without importing the packages above it (otherwise its
    parent is imported first), for a subpackage whose parent's ``__init__`` imports it by name,
    which binds it there: ``openai.types`` before ``openai``, whose ``__init__`` would import
    it whole. A parent imported or deferred already gets it as an attribute here."""
    if name in sys.modules:
        return False
    spec = _spec_before_parent(name) if before_parent else importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    loader = spec.loader
    package = importlib.util.module_from_spec(spec)
    lock = threading.Lock()
    ran = False

    def run_init() -> None:
        nonlocal ran
        with lock:
            if ran:
                return
            del package.__getattr__, package.__dir__
            try:
                loader.exec_module(package)
            except BaseException:  # raised here; the next read tries again
                hook()
                raise
            ran = True

    def __getattr__(attribute: str) -> object:
        run_init()
        return getattr(package, attribute)

    def __dir__() -> list[str]:
        run_init()
        return sorted(vars(package))

    def hook() -> None:
        package.__getattr__ = __getattr__  # type: ignore[method-assign]
        package.__dir__ = __dir__  # type: ignore[method-assign]

    hook()
    sys.modules[name] = package
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, package)
    return True


def _spec_before_parent(name: str) -> importlib.machinery.ModuleSpec | None:
    """``name``'s spec, found without importing a package above it (``find_spec`` imports the
    parent, whose ``__init__`` may import ``name`` whole). None when it cannot be found."""
    parent, _, _ = name.rpartition(".")
    if not parent:
        return importlib.util.find_spec(name)
    above = sys.modules.get(parent)
    if above is not None:  # imported or deferred: its ``__path__`` is set either way
        locations = getattr(above, "__path__", None)
    else:
        parent_spec = _spec_before_parent(parent)
        locations = parent_spec.submodule_search_locations if parent_spec is not None else None
    if locations is None:  # the parent is a module, not a package, or is missing
        return None
    return importlib.machinery.PathFinder.find_spec(name, list(locations))
