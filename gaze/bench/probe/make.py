"""A probe set from a user's clips: each clip re-encoded untouched (the control), a variant per
injected kind with its exact span and box, the semantic variants, and the manifests that list
them with their truth. Reproducible from the seed; written into the probe folder only."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gaze.atomic import atomic_write_text, inside
from gaze.bench.forge2.frames import FRAME_INJECTIONS
from gaze.bench.inputs import load_manifest
from gaze.bench.probe import composite
from gaze.bench.probe.canvas import FootageCanvas
from gaze.bench.probe.footage import Footage, load_footage, write_variant
from gaze.bench.probe.semantic import EXPECTED, FRAMES_OF, other_instruction
from gaze.errors import GazeInputError

INJECTED: dict[str, Callable[[Any], dict[str, Any]]] = {
    "freeze": FRAME_INJECTIONS["freeze"],
    "stutter": composite.stutter,
    "glitch": FRAME_INJECTIONS["glitch"],
    "corruption": FRAME_INJECTIONS["corruption"],
    "blur": FRAME_INJECTIONS["blur"],
    "low_visibility": FRAME_INJECTIONS["low_visibility"],
    "shake": composite.shake,
    "vanish": composite.vanish,
    "appear": composite.appear,
    "jump": composite.jump,
}
"""Every injected probe kind: forge v2's frame-level injections on the user's frames, and the
composites of ``gaze.bench.probe.composite``."""
FRAME_LEVEL = ("freeze", "stutter", "glitch", "corruption")
NEEDS = {
    "freeze": "where the picture moves around a second of frames",
    "stutter": "of a second or two where the picture moves with no repeated frame",
}
"""What a kind that cannot be placed anywhere needed (footage padded to its file's rate, or
still, has no such stretch)."""
OBJECT_LEVEL = ("vanish", "appear", "jump")
ORIGINAL = "original"
NO_INSTRUCTION = "do the task the clip shows"
"""The instruction of a clip given without one: the pixel default reads none, and a model
method is refused such clips (``gaze probe`` asks for ``--instruction``)."""
VIDEO_SUFFIXES = (".mp4", ".webm", ".mov", ".mkv", ".avi", ".gif", ".m4v")


@dataclass(frozen=True)
class Source:
    clip_id: str
    path: Path
    instruction: str
    events: tuple[dict[str, Any], ...] = ()
    """Failures the clip is known to hold (a manifest's truth): every variant keeps them."""


@dataclass
class ProbeSet:
    """What ``make_probe_set`` wrote: manifest rows by file, and what it skipped and why."""

    folder: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    semantic: list[dict[str, Any]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def sources_of(given: Path, instruction: str | None) -> list[Source]:
    """The clips to probe: a gaze manifest's rows, a folder's videos, or one video. Clips
    without an instruction in a manifest take ``instruction``."""
    if not given.exists():
        raise GazeInputError(f"no such file or folder: {given}")
    if given.is_file() and given.suffix == ".jsonl":
        rows = load_manifest(given, for_diagnosis=False)
        base = given.resolve().parent
        return [
            Source(
                r.clip_id,
                base / r.video,
                r.instruction or instruction or "",
                tuple(e.model_dump(mode="json", exclude_none=True) for e in r.events),
            )
            for r in rows
        ]
    paths = (
        sorted(p for p in given.iterdir() if p.suffix.lower() in VIDEO_SUFFIXES)
        if given.is_dir()
        else [given]
    )
    if not paths:
        raise GazeInputError(f"{given} holds no video ({', '.join(VIDEO_SUFFIXES)})")
    return [Source(p.stem, p, instruction or "") for p in paths]


def _known(source: Source, duration_s: float) -> list[dict[str, Any]]:
    """The source's known events within the probed stretch (cut at its end)."""
    kept = []
    for event in source.events:
        if event["start_s"] < duration_s:
            cut = {**event, "end_s": min(event["end_s"], duration_s)}
            if cut.get("spans"):
                cut["spans"] = [[a, min(b, duration_s)] for a, b in cut["spans"] if a < duration_s]
            kept.append(cut)
    return kept


def _row(
    source: Source, kind: str, video: str, footage: Footage, events: list[dict[str, Any]], seed: int
) -> dict[str, Any]:
    known = _known(source, footage.duration_s)
    metadata: dict[str, Any] = {"probe": kind, "source": source.clip_id, "seed": seed}
    if events:  # the injected event follows the known ones: the trust report finds it by index
        metadata["injected"] = len(known)
    return {
        "clip_id": f"{source.clip_id}__{kind}",
        "video": video,
        "instruction": source.instruction or NO_INSTRUCTION,
        "condition_id": source.clip_id,
        "generator": "probe",
        "fps": footage.fps,
        "duration_s": round(footage.duration_s, 6),
        "events": known + events,
        "metadata": metadata,
    }


def _write(folder: Path, name: str, frames: list[np.ndarray], footage: Footage) -> str:
    target = inside(folder / "clips", name + footage.suffix)
    write_variant(frames, target, footage)
    return f"clips/{target.name}"


def _probe_source(
    source: Source,
    footage: Footage,
    folder: Path,
    index: int,
    seed: int,
    kinds: Sequence[str],
    semantic: Sequence[str],
    instructions: list[str],
    skipped: dict[str, str],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One source's control, injected variants and semantic variants (rows of both manifests)."""
    video = _write(folder, f"{source.clip_id}__{ORIGINAL}", footage.frames, footage)
    rows = [_row(source, ORIGINAL, video, footage, [], seed)]
    for number, kind in enumerate(kinds):
        canvas = FootageCanvas(footage, np.random.default_rng([seed, index, number]))
        try:
            event = INJECTED[kind](canvas)
        except ValueError as exc:  # no free or moving stretch long enough in this clip
            needs = NEEDS.get(kind)
            skipped[f"{source.clip_id}__{kind}"] = f"no stretch {needs}" if needs else str(exc)
            continue
        video = _write(folder, f"{source.clip_id}__{kind}", canvas.render(), footage)
        rows.append(_row(source, kind, video, footage, [event], seed))
    semantic_rows = []
    for number, kind in enumerate(semantic):
        rng = np.random.default_rng([seed, index, 1000 + number])
        frames = FRAMES_OF[kind](footage.frames)
        video = _write(folder, f"{source.clip_id}__{kind}", frames, footage)
        row = _row(source, kind, video, footage, [], seed)
        row["duration_s"] = round(len(frames) / footage.fps, 6)
        row["events"] = []  # scored by the trust report, not by span
        if kind == "mismatch":
            row["instruction"] = other_instruction(source.instruction, instructions, rng)
        expected = EXPECTED[kind]
        row["metadata"]["expects"] = {"dimension": expected.dimension, "score": expected.score}
        semantic_rows.append(row)
    return rows, semantic_rows


def make_probe_set(
    sources: Sequence[Source],
    folder: Path,
    *,
    seed: int,
    kinds: Sequence[str],
    semantic: Sequence[str],
    max_seconds: float,
    on_clip: Callable[[str], None] | None = None,
) -> ProbeSet:
    """Write every source's control and variants into ``folder/clips``, then ``manifest.jsonl``
    (controls and injected variants: ``gaze bench score`` scores it) and ``semantic.jsonl``."""
    made = ProbeSet(folder)
    (folder / "clips").mkdir(parents=True, exist_ok=True)
    instructions = [s.instruction for s in sources if s.instruction]
    for index, source in enumerate(sources):
        if on_clip:
            on_clip(source.clip_id)
        try:  # a clip that cannot be read or re-encoded is skipped whole, with its reason
            footage = load_footage(source.path, max_seconds)
            rows, semantic_rows = _probe_source(
                source, footage, folder, index, seed, kinds, semantic, instructions, made.skipped
            )
        except GazeInputError as exc:
            made.skipped[source.clip_id] = str(exc)
            continue
        made.rows += rows
        made.semantic += semantic_rows
    if not made.rows:
        reasons = "; ".join(f"{k}: {v}" for k, v in made.skipped.items())
        raise GazeInputError(f"no clip could be probed ({reasons})")
    _write_jsonl(folder / "manifest.jsonl", made.rows)
    if made.semantic:
        _write_jsonl(folder / "semantic.jsonl", made.semantic)
    return made


def repeat_rows(rows: Sequence[dict[str, Any]], times: int) -> list[dict[str, Any]]:
    """Each control ``times`` more times under ids of its own (``<id>@r1``...), for the
    test-retest noise floor."""
    out = []
    for row in rows:
        if row["metadata"]["probe"] != ORIGINAL:
            continue
        for i in range(1, times + 1):
            out.append({**row, "clip_id": f"{row['clip_id']}@r{i}"})
    return out


def _write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in rows))
