"""The failures we found by eye in the shared clips (``bench/shared_clip_labels.jsonl``, what
``bench/probe_real.py`` keeps out of its false alarms) are events in gaze's format, of clips the
shared manifest lists, and the pixel default reports nothing on those clips beyond them."""

from __future__ import annotations

import json
from pathlib import Path

from gaze.bench.probe.make import Source, make_probe_set
from gaze.pixels.diagnosis import diagnose_pixels
from gaze.schema.events import Event
from gaze.schema.inputs import ClipInput
from tests.conftest import SHARED_CLIPS

LABELS = Path(__file__).resolve().parents[2] / "bench" / "shared_clip_labels.jsonl"


def _rows() -> list[dict]:
    return [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]


def test_every_label_is_an_event_with_who_saw_it_and_when():
    for row in _rows():
        assert set(row) == {"file", "events", "seen_by", "on"}
        assert row["events"] and row["seen_by"]
        for event in row["events"]:
            Event.model_validate(event)


def test_the_pixel_default_reports_only_labelled_failures_on_labelled_clips(
    shared_manifest, tmp_path
):
    """On the untouched control ``gaze probe`` makes of each labelled clip (its first 15 s,
    re-encoded): UniSim's long-horizon clip's holds between steps are found, and nothing else
    (an arm moving every fifth frame was a jump and an appearance before the rules for large
    steps and for a pane's blended edge)."""
    files = {r["file"] for r in shared_manifest}
    for row in _rows():
        assert row["file"] in files
        source = Source(row["file"], SHARED_CLIPS / row["file"], "x")
        made = make_probe_set(
            [source], tmp_path / row["file"], seed=0, kinds=[], semantic=[], max_seconds=15.0
        )
        (control,) = made.rows
        video = str(tmp_path / row["file"] / control["video"])
        report = diagnose_pixels(ClipInput(clip_id="c", video=video, instruction="x"))
        labelled = [
            (e["type"], e["start_s"], e["end_s"])
            for e in row["events"]
            if e["start_s"] < control["duration_s"]
        ]
        for event in report.events:
            assert any(
                event.type == kind and abs(event.start_s - a) < 0.05 and abs(event.end_s - b) < 0.05
                for kind, a, b in labelled
            ), f"{row['file']}: {event.type} {event.start_s}-{event.end_s} is no known failure"
        assert len(report.events) >= len(labelled) // 2
