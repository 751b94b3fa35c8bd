"""A user's footage as forge v2's injections see it (``gaze.bench.forge2.frames.Canvas``): the
same frame-level injections run on it, and the composites of ``gaze.bench.probe.composite``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gaze.bench.forge2.frames import Busy
from gaze.bench.forge_common import ReferenceEvents
from gaze.bench.probe.footage import Footage

MOVING_DIFF = 1.5
"""Mean grey difference (0-255) between neighbouring frames above which the picture moves: a
freeze over a still stretch of footage changes nothing and is no probe."""
REPEAT_DIFF = 0.3
"""Below this a frame repeats the one before (on the thumbnails the canvas measures)."""


@dataclass
class FootageCanvas(ReferenceEvents):
    """One variant being made from ``footage``: its random draws, the frames its injections
    hold, and the edits they queued (applied to a copy of the frames by ``render``)."""

    EVIDENCE = "probe"

    footage: Footage
    rng: np.random.Generator
    busy: Busy = field(default_factory=list)
    frame_edits: list[Callable[[list[np.ndarray]], None]] = field(default_factory=list)

    @property
    def size(self) -> tuple[int, int]:
        height, width = self.footage.frames[0].shape[:2]
        return width, height

    @property
    def n(self) -> int:
        return len(self.footage.frames)

    @property
    def fps(self) -> float:
        return self.footage.fps

    def moving(self, f: int) -> bool:
        motion = self.footage.motion()
        return 0 < f < len(motion) and bool(motion[f] > MOVING_DIFF)

    def flowing(self, start: int, stop: int) -> bool:
        """Whether frames start..stop-1 each differ from the one before (no repeat) and the
        picture moves over them on average."""
        steps = self.footage.motion()[max(start, 1) : stop]
        return bool(steps.size and steps.min() > REPEAT_DIFF and steps.mean() > MOVING_DIFF)

    def render(self) -> list[np.ndarray]:
        """The footage's frames with every queued edit applied (the originals untouched)."""
        frames = list(self.footage.frames)
        for edit in self.frame_edits:
            edit(frames)
        return frames
