"""Reading a `bench run` folder for the viewer: its run.json, its reports, the manifest it ran
on, and any `bench score` outputs saved beside them. A damaged file is listed, never fatal."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gaze.bench.inputs import load_manifest, video_path
from gaze.bench.results import check_readable
from gaze.errors import GazeInputError
from gaze.formats.jsonl import JSON_ERRORS
from gaze.schema.manifest import ManifestClip
from gaze.schema.report import Report


@dataclass
class Scores:
    """One `bench score` output found with a run."""

    name: str
    """File name (the leaderboard shows it when a run has several)."""
    result: dict[str, Any]


@dataclass
class RunData:
    """Everything the viewer shows about one run."""

    folder: Path
    info: dict[str, Any]
    """run.json (empty when the run never finished writing it)."""
    reports: dict[str, Report]
    """Clip id -> report, in manifest order where the manifest is known."""
    scores: list[Scores] = field(default_factory=list)
    rows: dict[str, ManifestClip] = field(default_factory=dict)
    """Clip id -> manifest row (empty when the manifest cannot be read here)."""
    manifest: Path | None = None
    problems: list[str] = field(default_factory=list)
    """Files that could not be read, and why."""
    label: str = ""

    def video(self, clip_id: str) -> Path | None:
        """The clip's video: from the manifest when it is reachable, else the report's path."""
        row = self.rows.get(clip_id)
        if row is not None and self.manifest is not None:
            return video_path(self.manifest, row)
        report = self.reports.get(clip_id)
        return Path(report.clip.path) if report and report.clip else None

    def transcript(self, clip_id: str) -> list[dict[str, Any]]:
        """The clip's model exchanges in the order they were sent (none without a transcript)."""
        from gaze.bench.transcripts import transcript_path
        from gaze.report.transcript import transcript_of

        return transcript_of(transcript_path(self.folder, clip_id), self.problems)

    def scores_by_clip(self) -> dict[str, dict[str, Any]]:
        """Per-clip scorer detail (matches) from the first robogaze-protocol scores file."""
        for scores in self.scores:
            if scores.result.get("protocol") == "robogaze":
                return {c["clip_id"]: c for c in scores.result.get("per_clip", [])}
        return {}


def run_label(info: dict[str, Any], folder: Path) -> str:
    method = str(info.get("method") or "?")
    models = sorted(set((info.get("models") or {}).values()))
    return f"{method} · {', '.join(models)}" if models else method


def _read_json(path: Path, problems: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, *JSON_ERRORS) as exc:
        problems.append(f"{path.name}: {exc}")
        return None


def is_scores(data: Any) -> bool:
    return isinstance(data, dict) and "protocol" in data and "per_clip" in data


def load_run(folder: str | Path, extra_scores: list[Path] | None = None) -> RunData:
    """A run folder (``run.json`` and ``reports/``) as the viewer needs it."""
    folder = Path(folder)
    reports_dir = folder / "reports"
    if not reports_dir.is_dir():
        raise GazeInputError(f"{folder} is not a bench run folder (no reports/ inside)")
    problems: list[str] = []
    info = _read_json(folder / "run.json", problems) if (folder / "run.json").exists() else {}
    info = info if isinstance(info, dict) else {}
    reports: dict[str, Report] = {}
    for path in sorted(reports_dir.glob("*.json")):
        data = _read_json(path, problems)
        if data is None:
            continue
        try:
            report = Report.model_validate(data)
        except ValidationError as exc:
            problems.append(f"{path.name}: not a gaze report ({exc.error_count()} problem(s))")
            continue
        reports[report.clip_id] = report
    run = RunData(folder, info, reports, problems=problems)
    for path in sorted(folder.glob("*.json")):
        if path.name != "run.json" and is_scores(data := _read_json(path, problems)):
            try:
                check_readable(data, path.name)
            except GazeInputError as exc:
                problems.append(str(exc))
                continue
            run.scores.append(Scores(path.name, data))
    for path in extra_scores or []:
        data = _read_json(path, problems)
        if not is_scores(data):
            raise GazeInputError(f"{path} is not a `gaze bench score` output")
        check_readable(data, path)
        run.scores.append(Scores(path.name, data))
    manifest = info.get("manifest")
    if manifest and Path(manifest).is_file():
        try:
            rows = load_manifest(manifest, for_diagnosis=False)
        except GazeInputError as exc:
            problems.append(f"manifest {manifest}: {exc}")
        else:
            run.manifest = Path(manifest)
            run.rows = {r.clip_id: r for r in rows}
            order = {r.clip_id: i for i, r in enumerate(rows)}
            run.reports = dict(sorted(reports.items(), key=lambda kv: order.get(kv[0], len(order))))
    elif manifest:
        problems.append(f"manifest {manifest} is not reachable from here; no references shown")
    run.label = run_label(info, folder)
    return run
