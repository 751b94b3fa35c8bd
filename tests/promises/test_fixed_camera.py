"""README "Without a model": the pixel default on a still camera over a flat table, with a
gripper wiping across it and black, grey and white things among coloured ones (forge v2's fixed
stage). Each clip below was lost on `1cb5631`: the flat table was read as a letterbox margin
(and the thing near its "edge" dropped), the gripper's sweep was taken for camera motion, and a
plain table was reported as low visibility, which hid the changes inside it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gaze.bench.forge2.forge import forge_clip
from gaze.matching.spans import frame_iou
from gaze.schema.events import Event
from gaze.schema.report import Report
from tests.promises.conftest import gaze_cli

SEED = 8282
"""The fixed-stage forge seed these clips come from (``bench/pixel_evidence.py --stage fixed
--seed 8282``): clip i of that set is forge_clip(seed * 100_003 + i)."""
CLIPS = [
    (13, "disappearance"),  # lost to the flat table read as a letterbox
    (23, "teleportation"),  # the same
    (12, "teleportation"),  # a grey disc: lost to the sweep taken for camera motion
    (34, "teleportation"),  # lost inside a "flat (no contrast)" run on a plain, visible table
    (38, "shake"),  # the real shake is the only event; it came with five low-visibility runs
]


@pytest.mark.parametrize(("index", "kind"), CLIPS)
def test_the_pixel_default_on_a_still_camera_over_a_flat_table(
    tmp_path: Path, index: int, kind: str
) -> None:
    row = forge_clip(tmp_path / f"fixed_{index}", SEED * 100_003 + index, [kind], stage="fixed")
    assert row.metadata["stage"] == "fixed"
    proc = gaze_cli(
        "diagnose", str(tmp_path / row.video), "--instruction", row.instruction, "--json"
    )
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    (truth,) = row.events

    def overlap(e: Event) -> float:
        spans = [(np.array([s.start_s]), np.array([s.end_s])) for s in (e, truth)]
        return float(frame_iou(*spans, report.clip.fps)[0, 0])

    found = [e for e in report.events if e.type == truth.type and overlap(e) > 0]
    assert found, f"{truth.type} {truth.start_s}-{truth.end_s} missed: {report.events}"
    assert {e.type for e in report.events} == {truth.type}
