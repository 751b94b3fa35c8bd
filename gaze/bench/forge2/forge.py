"""Forge v2: clips that look more like real rollouts (textured scenes, several objects, an arm
that carries, pushes and occludes, camera pans and zooms, light drift, 10-30 fps, 256-1280 px,
h264 or VP9 at several qualities), with injected failures whose truth is exact."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from gaze.bench.forge.forge import forge_many
from gaze.bench.forge2.camera import shoot
from gaze.bench.forge2.encode import CODECS, encode
from gaze.bench.forge2.inject import INJECTIONS, TYPE_OF, Plan
from gaze.bench.forge2.script import rollout
from gaze.bench.forge2.world import backdrop, render_world
from gaze.errors import GazeInputError
from gaze.schema.events import Event
from gaze.schema.manifest import ManifestClip

GENERATOR = "gaze-forge-v2"
FPS = (10.0, 15.0, 24.0, 30.0)
SIZES = ((256, 256), (320, 240), (480, 360), (640, 480), (854, 480), (1280, 720))
QUALITIES = ("high", "medium", "low")
KINDS: tuple[str, ...] = ("clean", *INJECTIONS)
"""The order in which ``forge_set`` cycles through clip kinds."""


@dataclass(frozen=True)
class Look:
    """How a clip is filmed and stored."""

    fps: float
    size: tuple[int, int]
    codec: str
    quality: str


def pick_look(rng: np.random.Generator, max_side: int | None = None) -> Look:
    sizes = [s for s in SIZES if max_side is None or max(s) <= max_side] or [SIZES[0]]
    size = sizes[int(rng.integers(len(sizes)))]
    return Look(
        float(rng.choice(FPS)), size, str(rng.choice(list(CODECS))), str(rng.choice(QUALITIES))
    )


def forge_frames(
    seed: int, kinds: Sequence[str], look: Look | None = None, max_side: int | None = None
) -> tuple[list[np.ndarray], Look, str, list[dict], list[str]]:
    """Frames, look, instruction, reference events (sorted) and the clip's legitimate motions."""
    unknown = [k for k in kinds if k not in INJECTIONS]
    if unknown:
        raise GazeInputError(f"forge v2 cannot inject {unknown}; it knows {list(INJECTIONS)}")
    rng = np.random.default_rng(seed)
    look = look or pick_look(rng, max_side)
    world_bg = backdrop(rng)
    for attempt in range(20):  # a rollout may leave no room for an injection: draw another
        try:
            roll = rollout(np.random.default_rng([seed, attempt]), look.fps)
            plan = Plan(roll, look.size, np.random.default_rng([seed, attempt, 1]))
            events = [INJECTIONS[k](plan) for k in kinds]
            break
        except ValueError:
            continue
    else:
        raise GazeInputError(f"forge v2 found no room for {list(kinds)} with seed {seed}")
    cv2.setRNGSeed(seed % (1 << 31))
    frames = [
        shoot(render_world(world_bg, state, roll.tone), plan.matrix(k), look.size, roll.gain[k])
        for k, state in enumerate(roll.states)
    ]
    for edit in plan.frame_edits:
        edit(frames)
    events.sort(key=lambda e: e["start_s"])
    return frames, look, roll.instruction, events, roll.legit


def forge_clip(
    path: Path,
    seed: int,
    kinds: Sequence[str],
    clip_id: str | None = None,
    max_side: int | None = None,
) -> ManifestClip:
    """Write one clip (``.mp4`` h264 or ``.webm`` VP9, as its look says) and its manifest row."""
    frames, look, instruction, events, legit = forge_frames(seed, kinds, max_side=max_side)
    path = path.with_suffix(CODECS[look.codec].suffix)
    encode(frames, path, look.fps, look.codec, look.quality)
    return ManifestClip(
        clip_id=clip_id or path.stem,
        video=path.name,
        instruction=instruction,
        condition_id=f"forge2-seed-{seed}",
        generator=GENERATOR,
        fps=look.fps,
        duration_s=len(frames) / look.fps,
        events=[Event.model_validate(e) for e in events],
        metadata={
            "forge_version": 2,
            "forge_seed": seed,
            "injected": list(kinds),
            "types": [TYPE_OF[k] for k in kinds],
            "legitimate_motion": legit,
            "size": list(look.size),
            "codec": look.codec,
            "quality": look.quality,
        },
    )


def forge_set(
    outdir: Path, count: int, seed: int, max_side: int | None = None, kinds: Sequence[str] = KINDS
) -> list[ManifestClip]:
    """``count`` clips cycling through ``kinds`` (clean and each injection), plus
    ``manifest.jsonl``."""

    def make(folder: Path, i: int, kind: str) -> ManifestClip:
        injected = [] if kind == "clean" else [kind]
        name = f"forge2_s{seed}_{i:04d}_{kind}"
        return forge_clip(folder / name, seed * 100_003 + i, injected, max_side=max_side)

    return forge_many(outdir, count, kinds, make)
