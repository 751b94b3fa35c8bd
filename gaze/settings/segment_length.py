"""How many windows a clip's segments span: the base length (``max_segment_windows``) for a
clip of up to ``segments_per_clip`` such segments; longer for a longer clip, so that its calls
stay near a short clip's (RoboGaze's 14.2 calls for clips over 30 s), as far as one call's
frames (``max_frames_per_call``, already fitted to the served model) allow. The observers group
windows by this length and the segments split on the same groups, so a segment's specialist and
critic send the frames its observer call sent, in the same order."""

from __future__ import annotations

import math

from gaze.settings.context import GazeContext


def segment_windows(ctx: GazeContext, windows: int) -> int:
    """Windows per segment of a clip of ``windows`` windows (pure; 0 windows: unknown, the base
    length)."""
    base = max(1, ctx.max_segment_windows)
    if ctx.segments_per_clip < 1 or windows <= base * ctx.segments_per_clip:
        return base
    per_window = 1 if ctx.grid else ctx.frames_per_window
    most = max(base, ctx.max_frames_per_call // per_window)
    return min(most, math.ceil(windows / ctx.segments_per_clip))
