"""Rebuild the demo clip shipped in ``gaze/assets``: ``python -m gaze.bench.forge.demo``.

The demo is a forge clip (never third-party footage) with two injected failures, so that
``gaze diagnose --demo`` has something real to find on any machine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gaze.atomic import atomic_write_text
from gaze.bench.forge.forge import forge_clip

DEMO_SEED = 7
DEMO_FAILURES = ("object_teleportation", "camera_instability")
ASSETS = Path(__file__).resolve().parents[2] / "assets"


def build(assets: Path = ASSETS) -> dict[str, Any]:
    row = forge_clip(assets / "demo.mp4", DEMO_SEED, DEMO_FAILURES, clip_id="demo")
    meta = {
        "instruction": row.instruction,
        "seed": DEMO_SEED,
        "failures": list(DEMO_FAILURES),
        "events": [e.model_dump(mode="json", exclude_none=True) for e in row.events],
    }
    atomic_write_text(assets / "demo.json", json.dumps(meta, indent=2) + "\n")
    return meta


if __name__ == "__main__":
    print(json.dumps(build(), indent=2))
