"""Codebook and data models."""

from gaze.schema.codebook import Codebook, LoadedCodebook, load_codebook
from gaze.schema.events import Event
from gaze.schema.inputs import ClipInput
from gaze.schema.manifest import ManifestClip, Prediction
from gaze.schema.report import Report, RunManifest

__all__ = [
    "ClipInput",
    "Codebook",
    "Event",
    "LoadedCodebook",
    "ManifestClip",
    "Prediction",
    "Report",
    "RunManifest",
    "load_codebook",
]
