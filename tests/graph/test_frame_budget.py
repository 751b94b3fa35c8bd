"""A run's calls hold at most ``frames_in_flight`` frames at once, whatever the clip's length
(what bounds a long clip's memory), and a call larger than the budget still runs, alone."""

from __future__ import annotations

import asyncio

from gaze.api import adiagnose
from gaze.bench.forge import forge_clip
from gaze.graph.frame_budget import FrameBudget
from gaze.models.protocol import ModelReply, ModelRequest
from gaze.models.scripted import ScriptedBackbone, minimal_instance
from gaze.settings.context import GazeContext


def test_frames_are_counted_in_and_out():
    async def run() -> list[tuple[str, int]]:
        budget, seen = FrameBudget(40), []

        async def call(name: str, frames: int, wait: float) -> None:
            async with budget.hold(frames):
                seen.append((name, budget.held))
                await asyncio.sleep(wait)

        await asyncio.gather(call("a", 32, 0.05), call("b", 16, 0.0), call("c", 8, 0.0))
        await call("huge", 90, 0.0)  # more than the budget: runs once nothing else holds any
        return seen

    assert asyncio.run(run()) == [("a", 32), ("c", 40), ("b", 16), ("huge", 90)]


class Counting(ScriptedBackbone):
    """Answers minimally after a pause, noting the most images in flight at once."""

    def __init__(self) -> None:
        super().__init__(lambda r: minimal_instance(r.json_schema), model="count", latency_s=0.05)
        self.in_flight = self.most = 0

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.in_flight += request.images
        self.most = max(self.most, self.in_flight)
        try:
            return await super().complete(request)
        finally:
            self.in_flight -= request.images


def test_a_runs_calls_hold_no_more_frames_than_the_budget(tmp_path):
    video = tmp_path / "clip.mp4"
    forge_clip(video, seed=4, failures=[], duration_s=32.0)  # 8 windows of 16 frames

    def most(**settings: int) -> int:
        backbone = Counting()
        asyncio.run(
            adiagnose(
                video,
                "put the block on the plate",
                backbones={"default": backbone},
                context=GazeContext(use_cache=False, **settings),
            )
        )
        return backbone.most

    assert most() >= 128  # unbounded by the budget here: both four-window segments at once
    assert most(frames_in_flight=64) <= 64  # one segment's 64 frames at a time
    pairs = {"max_segment_windows": 2, "max_frames_per_call": 32}
    assert most(**pairs) >= 64  # four pairs of windows, several at once
    assert most(frames_in_flight=40, **pairs) <= 40
