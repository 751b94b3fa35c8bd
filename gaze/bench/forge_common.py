"""What both forges share: writing a set of clips and its manifest, the ground-truth event of a
forged failure, the two-link arm's elbow, and encoding clips with PyAV (its wheels carry libx264
and libvpx): h264 in MP4 and VP9 in WebM at three qualities, written atomically, with a frame's
timestamp exactly k/fps."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from gaze.atomic import atomic_write_text, replacing
from gaze.errors import GazeInputError
from gaze.schema.codebook import load_codebook
from gaze.schema.manifest import ManifestClip


@dataclass(frozen=True)
class Codec:
    encoder: str
    suffix: str
    crf: dict[str, int]
    """Constant-quality setting per quality level (higher is worse)."""
    options: dict[str, str]


CODECS = {
    "h264": Codec("libx264", ".mp4", {"high": 18, "medium": 28, "low": 36}, {"preset": "veryfast"}),
    "vp9": Codec(
        "libvpx-vp9",
        ".webm",
        {"high": 24, "medium": 40, "low": 54},
        {"b": "0", "deadline": "realtime", "cpu-used": "8", "row-mt": "1"},
    ),
}


def encode(frames: list[np.ndarray], path: Path, fps: float, codec: str, quality: str) -> None:
    """Write BGR ``frames`` to ``path`` with ``codec`` at ``quality``."""
    import av  # only the forge encodes; decoding goes through OpenCV

    spec = CODECS[codec]
    rate = Fraction(fps).limit_denominator(1001)
    with replacing(path, spec.suffix) as tmp, av.open(str(tmp), mode="w") as container:
        stream = container.add_stream(spec.encoder, rate=rate)
        assert isinstance(stream, av.VideoStream)
        stream.width, stream.height = frames[0].shape[1], frames[0].shape[0]
        stream.pix_fmt = "yuv420p"
        stream.codec_context.time_base = 1 / rate
        stream.options = {"crf": str(spec.crf[quality]), **spec.options}
        for k, frame in enumerate(frames):
            picture = av.VideoFrame.from_ndarray(frame, format="bgr24")
            picture.pts = k
            for packet in stream.encode(picture):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def elbow_of(
    base: tuple[float, float], target: tuple[float, float], links: tuple[float, float]
) -> tuple[float, float]:
    """Elbow of a two-link arm from ``base`` reaching ``target`` (elbow to the right)."""
    l1, l2 = links
    dx, dy = target[0] - base[0], target[1] - base[1]
    dist = min(max(float(np.hypot(dx, dy)), 1.0), l1 + l2 - 1e-3)
    cos_elbow = (l1**2 + dist**2 - l2**2) / (2 * l1 * dist)
    angle = np.arctan2(dy, dx) - np.arccos(np.clip(cos_elbow, -1, 1))
    return (base[0] + l1 * np.cos(angle), base[1] + l1 * np.sin(angle))


def reference_event(
    ftype: str, start: int, end: int, fps: float, description: str, evidence: str
) -> dict[str, Any]:
    """A forged failure as the manifest's ground truth records it (frames to seconds, the
    codebook's dimension and default severity)."""
    book = load_codebook().codebook
    return {
        "dimension": book.dimension_of(ftype),
        "type": ftype,
        "start_s": round(start / fps, 6),
        "end_s": round(end / fps, 6),
        "severity": float(book.type(ftype).default_severity),
        "description": description,
        "evidence": [evidence],
    }


class ReferenceEvents(ABC):
    """What a forge's injection plan gives each injected failure: its reference event, with the
    injection's kind in the evidence (after ``EVIDENCE``) and its regions. The plan says its
    frame rate."""

    EVIDENCE: ClassVar[str]
    """Who made the event: the evidence line's prefix."""

    @property
    @abstractmethod
    def fps(self) -> float:
        """Frames per second of the clip the plan injects into."""

    def event(
        self,
        ftype: str,
        kind: str,
        start: int,
        end: int,
        description: str,
        regions: Sequence[dict[str, Any]] = (),
    ) -> dict[str, Any]:
        event = reference_event(
            ftype, start, end, self.fps, description, f"{self.EVIDENCE}: {kind}"
        )
        return {**event, "regions": list(regions)}


def forge_many(
    outdir: Path,
    count: int,
    kinds: Sequence[str],
    make: Callable[[Path, int, str], ManifestClip],
    on_clip: Callable[[ManifestClip], None] | None = None,
) -> list[ManifestClip]:
    """``count`` clips cycling through ``kinds``, each made by ``make(outdir, i, kind)`` (and
    reported to ``on_clip``), plus ``manifest.jsonl`` (written atomically once every clip
    exists)."""
    if count < 1:
        raise GazeInputError("--count must be at least 1")
    outdir = Path(outdir)
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GazeInputError(f"cannot create {outdir}: {exc.strerror}") from exc
    rows = []
    for i in range(count):
        rows.append(make(outdir, i, kinds[i % len(kinds)]))
        if on_clip is not None:
            on_clip(rows[-1])
    lines = [json.dumps(r.model_dump(mode="json", exclude_none=True)) for r in rows]
    atomic_write_text(outdir / "manifest.jsonl", "\n".join(lines) + "\n")
    return rows
