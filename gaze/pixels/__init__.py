"""Pixel evidence: per-frame signals, the detectors that turn them into candidate failure events,
and the pixel-only diagnosis (DESIGN section 8). Reads what ``gaze.video`` decodes; decoding
never imports this package (the decoding child is handed ``measure.PIXEL_PASS`` instead)."""
