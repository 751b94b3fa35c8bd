"""The diagnosis graph: state, run context, routing, and ``build_graph()``.

``from gaze.graph import build_graph, GazeContext`` (LangGraph is imported on first use only).
"""

from __future__ import annotations

from typing import Any

__all__ = ["GazeContext", "build_graph"]


def __getattr__(name: str) -> Any:
    if name == "build_graph":
        from gaze.graph.graph import build_graph

        return build_graph
    if name == "GazeContext":
        from gaze.settings.context import GazeContext

        return GazeContext
    raise AttributeError(f"module 'gaze.graph' has no attribute {name!r}")
