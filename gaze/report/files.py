"""Report files: JSON and HTML, written atomically."""

from __future__ import annotations

from pathlib import Path

from gaze.atomic import atomic_write_text
from gaze.schema.report import Report


def report_json(report: Report) -> str:
    return report.model_dump_json(indent=2) + "\n"


def write_report(report: Report, path: str | Path) -> None:
    atomic_write_text(path, report_json(report))


def write_html(
    report: Report,
    path: str | Path,
    video: Path | None = None,
    embed_video: bool = False,
    transcript: Path | None = None,
) -> None:
    """The HTML report at ``path``, its video linked relative to it (or inlined), with the
    clip's model exchanges when a ``transcript`` file was written."""
    from gaze.report.html import render_html

    extra = ""
    if transcript is not None and transcript.is_file():
        from gaze.models.transcript import read_transcript
        from gaze.report.transcript import transcript_section

        extra = transcript_section(read_transcript(transcript)[1])
    atomic_write_text(path, render_html(report, Path(path), video, embed_video, extra=extra))
