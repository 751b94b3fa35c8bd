"""How many frames a run's calls may hold at once: a call reads its frames only once its count
fits, and gives them back when its reply is in. A request in flight holds its frames (the
request body is made of them), so this bound, not the clip's length, sets the memory they take:
a 10-minute clip has far more calls ready at once than a 1-minute one, but no more frames in
memory than the budget. Counting frames rather than calls lets small calls (a grid a window,
a critic on a short segment) through beside large ones."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from gaze.agents.common import subsample
from gaze.video.store import window_frame_count, window_frames

if TYPE_CHECKING:
    from gaze.video.clip import DecodedClip


class FrameBudget:
    """A weighted semaphore over frames; one call may take more than the budget when nothing
    else holds any (it could never run otherwise)."""

    def __init__(self, frames: int) -> None:
        self.frames = max(1, frames)
        self.held = 0
        self._changed: asyncio.Condition | None = None

    @contextlib.asynccontextmanager
    async def hold(self, count: int) -> AsyncIterator[None]:
        if self._changed is None:  # made in the loop that first uses it
            self._changed = asyncio.Condition()
        changed = self._changed
        async with changed:
            await changed.wait_for(lambda: self.held == 0 or self.held + count <= self.frames)
            self.held += count
        try:
            yield
        finally:
            async with changed:
                self.held -= count
                changed.notify_all()


@contextlib.asynccontextmanager
async def held_frames(
    budget: FrameBudget, clip: DecodedClip, window_indices: list[int], limit: int
) -> AsyncIterator[list[tuple[float, bytes]]]:
    """The windows' frames, at most ``limit`` spread evenly (a segment's call), read once the
    budget has room for them and held until the block ends."""
    async with budget.hold(min(window_frame_count(clip, window_indices), limit)):
        yield subsample(window_frames(clip, window_indices), limit)
