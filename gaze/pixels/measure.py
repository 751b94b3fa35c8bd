"""The pixel pass over one decoded clip: signals, then candidate events. The decoding child
runs it beside and after decoding when it is handed ``PIXEL_PASS``."""

from __future__ import annotations

from gaze.pixels.evidence import detect
from gaze.pixels.signals import SignalMeter, SignalSeries, compute_signals
from gaze.schema.events import Event
from gaze.video.clip import DecodedClip
from gaze.video.decode_process import PixelPass

PixelEvidence = tuple[SignalSeries, list[Event]]


def measure_pixels(clip: DecodedClip, signals: SignalSeries | None = None) -> PixelEvidence:
    """Pixel signals and candidate events of a decoded clip (pure CPU work); pass ``signals``
    when they were measured while decoding."""
    signals = compute_signals(clip.analysis) if signals is None else signals
    return signals, detect(clip.analysis, signals)


PIXEL_PASS = PixelPass(meter=SignalMeter, measure=measure_pixels)
"""What a clip store hands its decoding children when the run uses pixel evidence."""
