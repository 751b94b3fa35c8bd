"""Pixel findings, and the one place they become report events (so that every detector rounds
and bounds alike).

A finding holds plain values. The detectors run in the decoding child after decoding, and a
long clip's router call waits for them: building the report's event models there loaded
pydantic and the codebook, 0.1 s of the child's CPU on that path. The parent, which has those
models loaded, makes the events from the findings (``events_of``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gaze.schema.events import Event


@dataclass(frozen=True)
class PixelRegion:
    """A box on one frame (``gaze.schema.events.EvidenceRegion``'s fields)."""

    t_s: float
    box: tuple[float, float, float, float]
    label: str = ""


@dataclass(frozen=True)
class PixelFinding:
    """A detector's candidate event: an ``Event``'s fields less those the codebook gives (the
    dimension, and the severity when the detector names none)."""

    type: str
    start_s: float
    end_s: float
    description: str
    evidence: list[str]
    confidence: float
    severity: float | None = None
    regions: list[PixelRegion] = field(default_factory=list)


def pixel_finding(
    ftype: str,
    start_s: float,
    end_s: float,
    description: str,
    evidence: list[str],
    confidence: float,
    severity: float | None = None,
    regions: list[PixelRegion] | None = None,
) -> PixelFinding:
    """A finding with its times at frame instants (6 decimals) and its confidence kept within
    0.05-0.95."""
    return PixelFinding(
        type=ftype,
        start_s=round(start_s, 6),  # a frame instant (1/30 s): 4 digits moved it off the frame
        end_s=round(max(start_s, end_s), 6),
        description=description,
        evidence=evidence,
        confidence=round(min(max(confidence, 0.05), 0.95), 3),
        severity=severity,
        regions=regions or [],
    )


def events_of(findings: Sequence[PixelFinding]) -> list[Event]:
    """The findings as report events: the dimension and the default severity from the
    codebook."""
    from gaze.schema.codebook import load_codebook
    from gaze.schema.events import Event, EvidenceRegion

    book = load_codebook().codebook
    return [
        Event(
            dimension=book.dimension_of(f.type),
            type=f.type,
            start_s=f.start_s,
            end_s=f.end_s,
            severity=float(f.severity or book.type(f.type).default_severity),
            description=f.description,
            evidence=f.evidence,
            confidence=f.confidence,
            regions=[EvidenceRegion(t_s=r.t_s, box=r.box, label=r.label) for r in f.regions],
        )
        for f in findings
    ]
