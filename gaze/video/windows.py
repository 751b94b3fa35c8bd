"""The window schedule: which instants are sampled and how they group into windows.

Pure functions of (duration, settings); the decoder then picks, for each target instant, the first
frame whose timestamp reaches it, and records that frame's true timestamp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SamplingSettings:
    """How a clip is cut into windows and how frames are prepared."""

    window_s: float = field(default=4.0, metadata={"description": "Window length in seconds."})
    frames_per_window: int = field(
        default=16, metadata={"description": "Frames sampled per full window (16 / 4 s = 4 fps)."}
    )
    max_side: int = field(
        default=768, metadata={"description": "Longest side of frames sent to models, pixels."}
    )
    jpeg_quality: int = field(
        default=85, metadata={"description": "JPEG quality of frames sent to models, 1-100."}
    )
    grid: bool = field(
        default=False,
        metadata={
            "description": "Send each window as one grid image of its frames, each tile "
            "stamped with its time (max_side is then the grid's longest side)."
        },
    )
    analysis_fps: float = field(
        default=10.0, metadata={"description": "Cap on the rate of frames used for pixel signals."}
    )
    analysis_short_side: int = field(
        default=120, metadata={"description": "Shorter side of pixel-signal thumbnails."}
    )
    analysis_long_cap: int = field(
        default=480, metadata={"description": "Cap on the longer side of pixel-signal thumbnails."}
    )
    max_duration_s: float = field(
        default=600.0, metadata={"description": "Longer clips are analysed up to this point only."}
    )
    max_input_side: int = field(
        default=4096, metadata={"description": "Larger frames are downscaled with a warning."}
    )

    def __post_init__(self) -> None:
        if self.window_s <= 0 or self.frames_per_window < 1:
            raise ValueError("window_s must be > 0 and frames_per_window >= 1")

    @property
    def sample_interval_s(self) -> float:
        return self.window_s / self.frames_per_window


@dataclass
class Window:
    """One non-overlapping window of the clip and the frames sampled in it."""

    index: int
    start_s: float
    end_s: float
    frame_indices: list[int] = field(default_factory=list)
    timestamps_s: list[float] = field(default_factory=list)
    planned: int = field(default=0, compare=False, repr=False)
    """The clip's window count as its container states it, on a window handed over while the
    clip decodes (what groups it before the decoded clip's windows are known); 0 otherwise."""

    def images(self, grid: bool) -> int:
        """How many images a call is sent for this window: its frames, or one grid."""
        return 1 if grid else len(self.frame_indices)


def target_times(duration_s: float, settings: SamplingSettings) -> list[float]:
    """Sampling instants 0, dt, 2dt, ... strictly before the clip ends."""
    dt = settings.sample_interval_s
    count = max(1, math.ceil(round(duration_s / dt, 9)))
    return [round(i * dt, 9) for i in range(count)]


def window_of(time_s: float, settings: SamplingSettings) -> int:
    """Index of the window a sampling instant belongs to."""
    return window_at(time_s, settings.window_s)


def window_at(time_s: float, window_s: float) -> int:
    """Index of the ``window_s`` window an instant belongs to."""
    return int(math.floor(round(time_s / window_s, 9)))


def empty_windows(duration_s: float, settings: SamplingSettings) -> list[Window]:
    """The windows covering [0, duration], the last one possibly shorter."""
    count = max(1, math.ceil(round(duration_s / settings.window_s, 9)))
    return [
        Window(
            index=i,
            start_s=round(i * settings.window_s, 6),
            end_s=round(min((i + 1) * settings.window_s, duration_s), 6),
        )
        for i in range(count)
    ]
