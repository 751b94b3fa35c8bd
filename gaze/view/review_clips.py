"""The clips ``gaze review`` shows, from what the user has: a bench run folder (the method's
events proposed), a folder of reports, or a manifest (its events proposed, or none: annotating
from scratch). Every clip's video must be there: a review without its videos is refused in one
line before anything is written."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from gaze.bench.inputs import load_manifest, video_path
from gaze.errors import GazeInputError
from gaze.schema.events import ScoringEvent
from gaze.schema.report import Report
from gaze.view.review_store import ReviewClip
from gaze.view.runs import load_run


def _proposed(report: Report | None) -> list[ScoringEvent]:
    if report is None:
        return []
    return [ScoringEvent.model_validate(e.model_dump()) for e in report.events]


def _from_run(folder: Path) -> list[ReviewClip]:
    run = load_run(folder)
    ids = list(run.rows) or list(run.reports)
    clips = []
    for clip_id in ids:
        report, row = run.reports.get(clip_id), run.rows.get(clip_id)
        video = run.video(clip_id)
        if video is None:
            raise GazeInputError(f"{folder}: clip {clip_id} has neither a report nor a video")
        info = report.clip if report else None
        clips.append(
            ReviewClip(
                clip_id=clip_id,
                video=video,
                instruction=row.instruction if row else report.instruction if report else "",
                proposed=_proposed(report),
                method=run.label if report else "",
                fps=(row.fps if row and row.fps else None) or (info.fps if info else None),
                duration_s=(row.duration_s if row else None) or (info.duration_s if info else None),
                condition_id=row.condition_id if row else "",
                generator=row.generator if row else "",
            )
        )
    return clips


def _from_reports(folder: Path) -> list[ReviewClip]:
    clips = []
    for path in sorted(folder.glob("*.json")):
        try:
            report = Report.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, UnicodeDecodeError):
            continue  # not a report: a folder may hold other files
        if report.clip is None:
            continue
        clips.append(
            ReviewClip(
                clip_id=report.clip_id,
                video=Path(report.clip.path),
                instruction=report.instruction,
                proposed=_proposed(report),
                method=f"reports in {folder.name}",
                fps=report.clip.fps,
                duration_s=report.clip.duration_s,
            )
        )
    return clips


def _from_manifest(path: Path) -> list[ReviewClip]:
    return [
        ReviewClip(
            clip_id=row.clip_id,
            video=video_path(path, row),
            instruction=row.instruction,
            proposed=list(row.events),
            method=f"manifest {path.name}" if row.events else "",
            fps=row.fps,
            duration_s=row.duration_s,
            condition_id=row.condition_id,
            generator=row.generator,
        )
        for row in load_manifest(path, for_diagnosis=False)
    ]


def review_clips(source: Path) -> list[ReviewClip]:
    """The clips of ``source`` with what was proposed for each; refuses missing videos."""
    if source.is_dir() and (source / "reports").is_dir():
        clips = _from_run(source)
    elif source.is_dir():
        clips = _from_reports(source)
    elif source.is_file():
        clips = _from_manifest(source)
    else:
        raise GazeInputError(f"no such run folder, report folder or manifest: {source}")
    if not clips:
        raise GazeInputError(f"{source} holds no clip to review")
    missing = [c for c in clips if not c.video.is_file()]
    if missing:
        raise GazeInputError(
            f"{len(missing)} of {len(clips)} clips have no video where {source} says (first: "
            f"{missing[0].clip_id} at {missing[0].video}); a review needs every clip's video"
        )
    return clips
