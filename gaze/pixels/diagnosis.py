"""The embedded default: a report from pixel evidence alone, when no model is configured.

It states plainly what it covers, so that an empty event list is never read as "clean".
"""

from __future__ import annotations

import dataclasses
import time

from gaze.pixels import (
    change_regions,
    evidence,
    frame_area,
    frame_events,
    local_change,
    motion,
    shake,
    stutter,
)
from gaze.pixels import signals as signal_rules
from gaze.pixels.measure import measure_pixels
from gaze.pixels.signals import SignalSeries
from gaze.schema.dimensions import DIMENSIONS
from gaze.schema.inputs import ClipInput
from gaze.schema.report import Assessment, PixelSignals, Report, run_manifest
from gaze.video import steps
from gaze.video.clip import DecodedClip, open_clip
from gaze.video.windows import SamplingSettings

PIXEL_TYPES = (
    "low_visibility",
    "blur",
    "camera_instability",
    "frame_corruption",
    "object_teleportation",
    "object_disappearance",
    "object_hallucination",
)
PIXEL_DIMENSIONS = ("object_scene_consistency", "physical_plausibility", "visual_quality")


def thresholds() -> dict[str, float]:
    """Every named threshold the detectors use, for the report's record."""
    out: dict[str, float] = {}
    for module in (
        evidence,
        shake,
        frame_events,
        stutter,
        steps,
        local_change,
        change_regions,
        motion,
        frame_area,
        signal_rules,
    ):
        for name, value in vars(module).items():
            if name.isupper() and isinstance(value, int | float) and not isinstance(value, bool):
                out[name] = float(value)
    return dict(sorted(out.items()))


def pixel_assessment() -> Assessment:
    missing: list[str] = [d for d in DIMENSIONS if d not in PIXEL_DIMENSIONS]
    return Assessment(
        mode="pixel_evidence",
        assessed=list(PIXEL_DIMENSIONS),
        not_assessed=missing,
        types_checked=list(PIXEL_TYPES),
        note=(
            "No model configured: only pixel-level evidence was checked "
            f"({', '.join(PIXEL_TYPES)}). An empty event list does not mean the clip is clean; "
            f"{', '.join(missing)} were not assessed. "
            "Configure a model (--model) for a full diagnosis."
        ),
    )


def pixel_signals(decoded: DecodedClip, signals: SignalSeries) -> PixelSignals:
    """The report's record of the signals and the thresholds that judged them."""
    times = signals.times_s
    analysis_fps = (
        decoded.info.fps
        if len(times) < 2
        else round((len(times) - 1) / max(float(times[-1] - times[0]), 1e-9), 4)
    )
    return PixelSignals(
        analysis_fps=analysis_fps,
        times_s=[round(float(t), 6) for t in times],
        series=signals.as_dict(),
        thresholds=thresholds(),
    )


def diagnose_pixels(clip: ClipInput, settings: SamplingSettings | None = None) -> Report:
    """Decode the clip once, compute pixel signals, and report what they show."""
    settings = settings or SamplingSettings()
    started = time.perf_counter()
    decoded = open_clip(clip.video, settings)
    signals, events = measure_pixels(decoded)
    return Report(
        clip_id=clip.clip_id,
        instruction=clip.instruction,
        initial_frame=clip.initial_frame,
        clip=decoded.info,
        events=events,
        flags=["pixel_evidence_only", *decoded.flags],
        assessment=pixel_assessment(),
        signals=pixel_signals(decoded, signals),
        manifest=run_manifest(
            {"method": "pixel_evidence", **dataclasses.asdict(settings)},
            time.perf_counter() - started,
        ),
    )
