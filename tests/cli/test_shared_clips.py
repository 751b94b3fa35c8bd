"""Every real clip of the shared set diagnoses without error, with metadata found by decoding.

Skipped with a reason when ../shared/clips is absent (a user's fresh clone)."""

from __future__ import annotations

import pytest

from gaze.pixels.diagnosis import diagnose_pixels
from gaze.schema.inputs import ClipInput
from tests.conftest import SHARED_CLIPS


@pytest.mark.slow
def test_every_shared_clip_gets_a_report(shared_manifest):
    for row in shared_manifest:
        report = diagnose_pixels(
            ClipInput(
                clip_id=row["file"],
                video=str(SHARED_CLIPS / row["file"]),
                instruction=row["instruction"],
            )
        )
        info = report.clip
        assert info is not None
        # decoded duration matches the manifest's video-stream duration (not the container's,
        # which for the Bridge clips includes a longer audio track)
        assert info.duration_s == pytest.approx(row["duration_s"], abs=1.5 / row["fps"]), row[
            "file"
        ]
        assert info.frame_count == row["nb_frames"], row["file"]
        assert (info.width, info.height) == (row["width"], row["height"])
        assert report.assessment.mode == "pixel_evidence"
        for event in report.events:
            assert 0 <= event.start_s <= event.end_s <= info.duration_s + 1e-6
