"""The pixel pass over one decoded clip: signals, then candidate events. The decoding child
runs it beside and after decoding when it is handed ``PIXEL_PASS``.

The parent process names the pass before its first request (a run's clip store is made with
it) and never runs it: the detectors, and NumPy with them, are imported where the pass runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gaze.video.decode_process import PixelPass

if TYPE_CHECKING:
    from gaze.pixels.signals import SignalMeter, SignalSeries
    from gaze.schema.events import Event
    from gaze.video.clip import DecodedClip


def measure_pixels(
    clip: DecodedClip, signals: SignalSeries | None = None
) -> tuple[SignalSeries, list[Event]]:
    """Pixel signals and candidate events of a decoded clip (pure CPU work); pass ``signals``
    when they were measured while decoding."""
    from gaze.pixels.evidence import detect
    from gaze.pixels.signals import compute_signals

    signals = compute_signals(clip.analysis) if signals is None else signals
    return signals, detect(clip.analysis, signals)


def signal_meter() -> SignalMeter:
    """A fresh meter for one clip's analysis thumbnails."""
    from gaze.pixels.signals import SignalMeter

    return SignalMeter()


PIXEL_PASS = PixelPass(meter=signal_meter, measure=measure_pixels)
"""What a clip store hands its decoding children when the run uses pixel evidence."""
