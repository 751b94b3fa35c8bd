"""Write the report's JSON Schema next to the model: ``python -m gaze.schema.export``."""

from __future__ import annotations

import json
from pathlib import Path

from gaze.schema.report import Report

SCHEMA_PATH = Path(__file__).with_name("report.schema.json")


def report_json_schema() -> str:
    return json.dumps(Report.model_json_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    SCHEMA_PATH.write_text(report_json_schema(), encoding="utf-8")
    print(f"wrote {SCHEMA_PATH}")
