"""Synthetic robot-manipulation clips with injected, pixel-visible failures."""

from gaze.bench.forge.failures import FAILURE_TYPES
from gaze.bench.forge.forge import KINDS, forge_clip, forge_frames, forge_set

__all__ = ["FAILURE_TYPES", "KINDS", "forge_clip", "forge_frames", "forge_set"]
