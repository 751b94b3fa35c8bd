"""Write the report's JSON Schema next to the model: ``python -m gaze.schema.export``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gaze.schema.report import Report

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


def report_json_schema() -> str:
    return json.dumps(Report.model_json_schema(), indent=2, sort_keys=True) + "\n"


def inlined_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with every ``$ref`` to its ``$defs`` replaced by the definition itself, so it
    can stand inside another schema (the graph's output state, which LangGraph's server
    publishes to Studio); the report's models hold no cycle."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                rest = {k: walk(v) for k, v in node.items() if k != "$ref"}
                return {**walk(defs[node["$ref"].rsplit("/", 1)[-1]]), **rest}
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    inlined: dict[str, Any] = walk(schema)
    return inlined


def report_schema_inlined() -> dict[str, Any]:
    """The report's JSON Schema with no references (``inlined_schema``)."""
    return inlined_schema(Report.model_json_schema())


if __name__ == "__main__":
    SCHEMA_PATH.write_text(report_json_schema(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
