"""What a graph run returns, in its own module: its schema is the report's, and building that
loads the report's models, which a run's first request does not need (``gaze.graph.early``
imports this package's state, not the output)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, WithJsonSchema, with_config
from typing_extensions import TypedDict

from gaze.schema.export import report_schema_inlined


@with_config(ConfigDict(use_attribute_docstrings=True))
class OutputState(TypedDict):
    """What a run returns: the report as JSON data (``gaze.schema.Report``)."""

    report: Annotated[dict[str, Any], WithJsonSchema(report_schema_inlined())]
    """The diagnostic report (its schema is the Report model's, as Studio shows it)."""
