"""The forge: synthetic pick-and-place clips with injected failures and exact ground truth."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gaze.bench.forge.failures import FAILURE_TYPES, FRAME_FAILURES, SCENE_FAILURES
from gaze.bench.forge.motion import pick_and_place
from gaze.bench.forge.scene import background, render
from gaze.bench.forge.writer import write_video
from gaze.bench.forge_common import forge_many
from gaze.errors import GazeInputError
from gaze.schema.events import Event
from gaze.schema.manifest import ManifestClip

GENERATOR = "gaze-forge"
SENSOR_NOISE_SIGMA = 2.0
# The order in which `forge_set` cycles through clip kinds: clean first, then each failure.
KINDS: tuple[str, ...] = ("clean", *FAILURE_TYPES)


def forge_frames(
    seed: int, failures: Sequence[str], duration_s: float = 8.0
) -> tuple[list[np.ndarray], float, str, list[dict[str, Any]]]:
    """Render one clip: frames, fps, instruction, reference events (sorted by time)."""
    unknown = [f for f in failures if f not in FAILURE_TYPES]
    if unknown:
        raise GazeInputError(f"the forge cannot inject {unknown}; it knows {list(FAILURE_TYPES)}")
    rng = np.random.default_rng(seed)
    bg = background(rng)
    roll = pick_and_place(rng, duration_s=max(duration_s, 8.0))
    busy: list[tuple[int, int]] = []
    events = [SCENE_FAILURES[f](roll, rng, busy) for f in failures if f in SCENE_FAILURES]
    frames = [render(bg, state) for state in roll.states]
    events += [
        FRAME_FAILURES[f](frames, roll.fps, rng, busy) for f in failures if f in FRAME_FAILURES
    ]
    noisy = []
    for frame in frames:
        noise = rng.normal(0, SENSOR_NOISE_SIGMA, frame.shape)
        noisy.append(np.clip(frame + noise, 0, 255).astype(np.uint8))
    events.sort(key=lambda e: e["start_s"])
    return noisy, roll.fps, roll.instruction, events


def forge_clip(
    path: Path,
    seed: int,
    failures: Sequence[str],
    clip_id: str | None = None,
    video_ref: str | None = None,
    duration_s: float = 8.0,
) -> ManifestClip:
    """Write one clip to ``path`` and return its manifest row."""
    frames, fps, instruction, events = forge_frames(seed, failures, duration_s)
    write_video(frames, path, fps)
    return ManifestClip(
        clip_id=clip_id or path.stem,
        video=video_ref or path.name,
        instruction=instruction,
        condition_id=f"forge-seed-{seed}",
        generator=GENERATOR,
        fps=fps,
        duration_s=len(frames) / fps,
        events=[Event.model_validate(e) for e in events],
        metadata={"forge_seed": seed, "injected": list(failures)},
    )


def forge_set(
    outdir: Path,
    count: int,
    seed: int,
    suffix: str = ".mp4",
    on_clip: Callable[[ManifestClip], None] | None = None,
) -> list[ManifestClip]:
    """``count`` clips cycling through clean and each failure kind, plus ``manifest.jsonl``;
    ``on_clip`` hears of each clip as it is written."""

    def make(folder: Path, i: int, kind: str) -> ManifestClip:
        failures = [] if kind == "clean" else [kind]
        name = f"forge_s{seed}_{i:04d}_{kind}{suffix}"
        return forge_clip(folder / name, seed * 100_003 + i, failures)

    return forge_many(outdir, count, KINDS, make, on_clip)
