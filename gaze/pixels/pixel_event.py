"""Pixel findings in the report's event format (one constructor, so that every detector rounds
and bounds alike)."""

from __future__ import annotations

from gaze.schema.codebook import load_codebook
from gaze.schema.events import Event, EvidenceRegion


def pixel_event(
    ftype: str,
    start_s: float,
    end_s: float,
    description: str,
    evidence: list[str],
    confidence: float,
    severity: float | None = None,
    regions: list[EvidenceRegion] | None = None,
) -> Event:
    """A pixel event: its dimension and default severity from the codebook, times at frame
    instants (6 decimals), confidence kept within 0.05-0.95."""
    book = load_codebook().codebook
    return Event(
        dimension=book.dimension_of(ftype),
        type=ftype,
        start_s=round(start_s, 6),  # a frame instant (1/30 s): 4 digits moved it off the frame
        end_s=round(max(start_s, end_s), 6),
        severity=float(severity or book.type(ftype).default_severity),
        description=description,
        evidence=evidence,
        confidence=round(min(max(confidence, 0.05), 0.95), 3),
        regions=regions or [],
    )
