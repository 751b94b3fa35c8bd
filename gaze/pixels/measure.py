"""The pixel pass over one decoded clip: signals, then candidate events. The decoding child
runs it beside and after decoding when it is handed ``PIXEL_PASS``, and sends its findings as
plain values; the parent makes them report events.

The parent process names the pass before its first request (a run's clip store is made with
it) and never runs it: the detectors, and NumPy with them, are imported where the pass runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gaze.pixels.pixel_event import events_of
from gaze.video.decode_process import PixelPass

if TYPE_CHECKING:
    from gaze.pixels.pixel_event import PixelFinding
    from gaze.pixels.signals import SignalMeter, SignalSeries
    from gaze.schema.events import Event
    from gaze.video.clip import DecodedClip


def find_pixels(
    clip: DecodedClip, signals: SignalSeries | None = None
) -> tuple[SignalSeries, list[PixelFinding]]:
    """Pixel signals and candidate findings of a decoded clip (pure CPU work, and no report
    models: the decoding child runs it); pass ``signals`` when they were measured while
    decoding."""
    from gaze.pixels.evidence import findings
    from gaze.pixels.signals import compute_signals

    signals = compute_signals(clip.analysis) if signals is None else signals
    return signals, findings(clip.analysis, signals)


def measure_pixels(
    clip: DecodedClip, signals: SignalSeries | None = None
) -> tuple[SignalSeries, list[Event]]:
    """Pixel signals and candidate events of a decoded clip, in this process."""
    signals, found = find_pixels(clip, signals)
    return signals, events_of(found)


def signal_meter() -> SignalMeter:
    """A fresh meter for one clip's analysis thumbnails."""
    from gaze.pixels.signals import SignalMeter

    return SignalMeter()


PIXEL_PASS = PixelPass(meter=signal_meter, measure=find_pixels, events=events_of)
"""What a clip store hands its decoding children when the run uses pixel evidence."""
