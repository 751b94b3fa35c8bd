"""Codebook and data models."""

from typing import TYPE_CHECKING

from gaze.lazy import lazy_members

if TYPE_CHECKING:
    from gaze.schema.codebook import Codebook, LoadedCodebook, load_codebook
    from gaze.schema.events import Event
    from gaze.schema.inputs import ClipInput
    from gaze.schema.manifest import ManifestClip, Prediction
    from gaze.schema.report import Report, RunManifest

__getattr__ = lazy_members(
    __name__,
    {
        "Codebook": "codebook",
        "LoadedCodebook": "codebook",
        "load_codebook": "codebook",
        "Event": "events",
        "ClipInput": "inputs",
        "ManifestClip": "manifest",
        "Prediction": "manifest",
        "Report": "report",
        "RunManifest": "report",
    },
)

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
