"""A finished diagnosis keeps none of the clip's frames: nothing cached by the image's bytes
(``gaze.models.tokens.jpeg_size`` kept every JPEG it measured, 225 MB for a 10-minute clip)."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

from gaze.api import adiagnose
from gaze.models.scripted import scripted_from_spec
from gaze.settings.context import GazeContext


def test_no_frame_outlives_its_run(forge_dir, forge_rows):
    warm, row = forge_rows["clean"], forge_rows["blur"]
    context = GazeContext(use_cache=False)
    # a first run, on another clip, loads every module and warms what is meant to stay
    asyncio.run(adiagnose(forge_dir / warm.video, warm.instruction, model="scripted:auto"))
    tracemalloc.start()
    try:
        report = asyncio.run(
            adiagnose(
                forge_dir / row.video,
                row.instruction,
                backbones={"default": scripted_from_spec("auto")},
                context=context,
            )
        )
        gc.collect()
        kept = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(True, "*gaze/video/*")]
        )
    finally:
        tracemalloc.stop()
    assert report.manifest.images > 0
    frames = sum(s.size for s in kept.statistics("filename"))
    assert frames < 100_000, kept.statistics("lineno")[:3]
