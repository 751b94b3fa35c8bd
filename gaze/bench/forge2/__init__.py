"""Forge v2: synthetic rollouts close enough to real footage to measure the pixel default on."""

from gaze.bench.forge2.forge import KINDS, forge_clip, forge_frames, forge_set
from gaze.bench.forge2.inject import TYPE_OF

__all__ = ["KINDS", "TYPE_OF", "forge_clip", "forge_frames", "forge_set"]
