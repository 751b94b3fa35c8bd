"""Forge v2: clips that look more like real rollouts (textured scenes, several objects, an arm
that carries, pushes and occludes, camera pans and zooms, light drift, 10-30 fps, 256-1280 px,
h264 or VP9 at several qualities), with injected failures whose truth is exact and which survive
the clip's own encoding (a draw whose edit the encoder erases is drawn again)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from gaze.bench.forge2.camera import shoot
from gaze.bench.forge2.inject import INJECTIONS, TYPE_OF, Plan
from gaze.bench.forge2.script import check_stage, rollout
from gaze.bench.forge2.survive import SURVIVES, surviving_share
from gaze.bench.forge2.world import backdrop, render_world
from gaze.bench.forge_common import CODECS, encode, forge_many
from gaze.errors import GazeInputError
from gaze.schema.events import Event
from gaze.schema.manifest import ManifestClip

GENERATOR = "gaze-forge-v2"
REVISION = 2
"""Bumped when the same seed forges different clips: 2 draws a clip again when its encoding
erases a frame edit."""
FPS = (10.0, 15.0, 24.0, 30.0)
SIZES = ((256, 256), (320, 240), (480, 360), (640, 480), (854, 480), (1280, 720))
QUALITIES = ("high", "medium", "low")
DRAWS = 20
"""Rollouts tried for one clip: a draw may leave no room for an injection, or the encoder may
erase an edit."""
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


@dataclass
class Draft:
    """One draw of a clip: its frames and everything the manifest says about them."""

    frames: list[np.ndarray]
    look: Look
    instruction: str
    events: list[dict[str, Any]]
    """The reference events, sorted by start."""
    legit: list[str]
    """The clip's legitimate motions."""
    attempt: int
    """Which draw of the seed this is."""
    clean: dict[int, np.ndarray] = field(default_factory=dict)
    """The rendered picture under each frame an edit replaced, by frame index."""


def draft(
    seed: int,
    kinds: Sequence[str],
    look: Look | None = None,
    max_side: int | None = None,
    after: int = -1,
    stage: str = "varied",
) -> Draft:
    """The first draw after draw ``after`` that has room for every injection in ``kinds``, on
    ``stage`` (``gaze.bench.forge2.script.STAGES``)."""
    unknown = [k for k in kinds if k not in INJECTIONS]
    if unknown:
        raise GazeInputError(f"forge v2 cannot inject {unknown}; it knows {list(INJECTIONS)}")
    check_stage(stage)
    rng = np.random.default_rng(seed)
    look = look or pick_look(rng, max_side)
    world_bg = backdrop(rng, flat_table=stage == "fixed")
    for attempt in range(after + 1, DRAWS):
        try:
            roll = rollout(np.random.default_rng([seed, attempt]), look.fps, stage)
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
    rendered = list(frames)
    for edit in plan.frame_edits:
        edit(frames)  # edits replace frames, never draw into them, so ``rendered`` stays clean
    clean = {k: rendered[k] for k, f in enumerate(frames) if f is not rendered[k]}
    events.sort(key=lambda e: e["start_s"])
    return Draft(frames, look, roll.instruction, events, roll.legit, attempt, clean)


def forge_frames(
    seed: int, kinds: Sequence[str], look: Look | None = None, max_side: int | None = None
) -> tuple[list[np.ndarray], Look, str, list[dict[str, Any]], list[str]]:
    """Frames, look, instruction, reference events (sorted) and the clip's legitimate motions,
    from the seed's first draw (before encoding, so nothing is checked against it)."""
    d = draft(seed, kinds, look, max_side)
    return d.frames, d.look, d.instruction, d.events, d.legit


def forge_clip(
    path: Path,
    seed: int,
    kinds: Sequence[str],
    clip_id: str | None = None,
    max_side: int | None = None,
    stage: str = "varied",
) -> ManifestClip:
    """Write one clip (``.mp4`` h264 or ``.webm`` VP9, as its look says) and its manifest row,
    drawing again while the encoder erases one of its frame edits."""
    d = draft(seed, kinds, max_side=max_side, stage=stage)
    path = path.with_suffix(CODECS[d.look.codec].suffix)
    while True:
        encode(d.frames, path, d.look.fps, d.look.codec, d.look.quality)
        survival = surviving_share(path, d.frames, d.clean)
        if survival >= SURVIVES:
            break
        if d.attempt + 1 >= DRAWS:
            path.unlink(missing_ok=True)
            raise GazeInputError(
                f"forge v2: the encoder erased the edits of {list(kinds)} in every draw of seed "
                f"{seed} ({d.look.codec} {d.look.quality})"
            )
        d = draft(seed, kinds, max_side=max_side, after=d.attempt, stage=stage)
    edits: dict[str, float | str] = {"edit_survival": round(survival, 3)} if d.clean else {}
    if stage != "varied":  # the varied stage's rows read as they did before stages existed
        edits["stage"] = stage
    return ManifestClip(
        clip_id=clip_id or path.stem,
        video=path.name,
        instruction=d.instruction,
        condition_id=f"forge2-seed-{seed}",
        generator=GENERATOR,
        fps=d.look.fps,
        duration_s=len(d.frames) / d.look.fps,
        events=[Event.model_validate(e) for e in d.events],
        metadata={
            "forge_version": 2,
            "forge_seed": seed,
            "forge_draw": d.attempt,
            "injected": list(kinds),
            "types": [TYPE_OF[k] for k in kinds],
            "legitimate_motion": d.legit,
            "size": list(d.look.size),
            "codec": d.look.codec,
            "quality": d.look.quality,
            **edits,
        },
    )


def forge_set(
    outdir: Path,
    count: int,
    seed: int,
    max_side: int | None = None,
    kinds: Sequence[str] = KINDS,
    stage: str = "varied",
    on_clip: Callable[[ManifestClip], None] | None = None,
) -> list[ManifestClip]:
    """``count`` clips cycling through ``kinds`` (clean and each injection), plus
    ``manifest.jsonl``; ``on_clip`` hears of each clip as it is written."""
    check_stage(stage)
    prefix = "forge2" if stage == "varied" else f"forge2{stage}"

    def make(folder: Path, i: int, kind: str) -> ManifestClip:
        injected = [] if kind == "clean" else [kind]
        name = f"{prefix}_s{seed}_{i:04d}_{kind}"
        return forge_clip(
            folder / name, seed * 100_003 + i, injected, max_side=max_side, stage=stage
        )

    return forge_many(outdir, count, kinds, make, on_clip)
