"""Reading benchmark manifests and predictions, with every problem reported, never skipped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gaze.errors import GazeInputError, first_error
from gaze.formats.jsonl import parse_json
from gaze.schema.events import ScoringEvent
from gaze.schema.input_rules import check_instruction
from gaze.schema.manifest import ManifestClip, Prediction
from gaze.schema.report import Report

MAX_LISTED = 5


def _summary(path: Path, problems: list[str], what: str) -> str:
    shown = "; ".join(problems[:MAX_LISTED])
    more = f"; and {len(problems) - MAX_LISTED} more" if len(problems) > MAX_LISTED else ""
    return f"{path}: {len(problems)} invalid {what}: {shown}{more}"


def load_manifest(path: str | Path, *, for_diagnosis: bool = True) -> list[ManifestClip]:
    """All rows, validated; any invalid row (missing field, unknown type, span outside the clip,
    duplicate id, empty instruction) fails the whole manifest with the rows named. Only scoring
    (``for_diagnosis=False``) takes rows without an instruction, as a peer's files may have."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise GazeInputError(f"cannot read manifest {path}: {exc}") from exc
    rows: list[ManifestClip] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = ManifestClip.model_validate(parse_json(line, f"line {number}"))
            if for_diagnosis or row.instruction:
                check_instruction(row.instruction)
        except GazeInputError as exc:
            problems.append(str(exc))
            continue
        except ValidationError as exc:
            problems.append(f"line {number}: {first_error(exc)}")
            continue
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        if row.clip_id in seen:
            problems.append(
                f"line {number}: duplicate clip_id {row.clip_id!r} "
                f"(first on line {seen[row.clip_id]})"
            )
            continue
        seen[row.clip_id] = number
        rows.append(row)
    if problems:
        raise GazeInputError(_summary(path, problems, "manifest row(s)"))
    if not rows:
        raise GazeInputError(f"manifest {path} has no rows")
    return rows


def video_path(manifest: str | Path, row: ManifestClip) -> Path:
    """A row's video, relative to the manifest's folder."""
    return (Path(manifest).parent / row.video).resolve()


def _from_report(data: object) -> Prediction:
    report = Report.model_validate(data)
    return Prediction(
        clip_id=report.clip_id,
        events=list[ScoringEvent](report.events),
        pa=report.pa.score if report.pa else None,
        ia=report.ia.score if report.ia else None,
        progress=report.progress.processed if report.progress else None,
        flags=list(report.flags),
    )


def _from_manifest_row(data: dict[str, Any]) -> Prediction:
    """A manifest row read as a prediction: a second annotator's labels scored against the
    first's is how inter-annotator agreement is measured."""
    row = ManifestClip.model_validate(data)
    return Prediction(clip_id=row.clip_id, events=row.events, pa=row.pa, ia=row.ia)


def _prediction(data: object, is_report: bool) -> Prediction:
    if is_report or (isinstance(data, dict) and "manifest" in data):
        return _from_report(data)
    if isinstance(data, dict) and "video" in data:
        return _from_manifest_row(data)
    return Prediction.model_validate(data)


def load_predictions(path: str | Path) -> dict[str, Prediction]:
    """Predictions from a JSONL file (rows ``{clip_id, events, ...}``, or a manifest's rows:
    their events and human scores), from a folder of ``gaze diagnose`` / ``gaze bench run``
    report files (``*.json``), or from a ``bench run`` folder (its ``reports``)."""
    path = Path(path)
    if path.is_dir() and (path / "run.json").is_file() and (path / "reports").is_dir():
        path = path / "reports"  # a `bench run` folder: its reports, not its run manifest
    predictions: dict[str, Prediction] = {}
    problems: list[str] = []
    if path.is_dir():
        sources = []
        for report_file in sorted(path.glob("*.json")):
            try:
                sources.append((report_file.name, report_file.read_text(encoding="utf-8"), True))
            except (OSError, UnicodeDecodeError) as exc:
                problems.append(f"{report_file.name}: cannot read as UTF-8 text ({exc})")
        if not sources and not problems:
            raise GazeInputError(f"no report files (*.json) in {path}")
    else:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GazeInputError(f"cannot read predictions {path}: {exc}") from exc
        sources = [
            (f"line {n}", line, False)
            for n, line in enumerate(text.splitlines(), 1)
            if line.strip()
        ]
    for where, text, is_report in sources:
        try:
            prediction = _prediction(parse_json(text, where), is_report)
        except GazeInputError as exc:
            problems.append(str(exc))
            continue
        except ValidationError as exc:
            problems.append(f"{where}: {first_error(exc)}")
            continue
        if prediction.clip_id in predictions:
            problems.append(f"{where}: second prediction for clip {prediction.clip_id!r}")
            continue
        predictions[prediction.clip_id] = prediction
    if problems:
        raise GazeInputError(_summary(path, problems, "prediction(s)"))
    return predictions


def check_known_clips(
    manifest: list[ManifestClip],
    predictions: dict[str, Prediction],
    source: str | Path,
    hint: str = "",
) -> None:
    """Predictions for clips the manifest does not have are an error (a typo, a wrong file);
    ``hint`` ends the message when the caller knows a likelier cause."""
    known = {row.clip_id for row in manifest}
    unknown = sorted(set(predictions) - known)
    if unknown:
        listed = ", ".join(unknown[:MAX_LISTED]) + (" ..." if len(unknown) > MAX_LISTED else "")
        raise GazeInputError(
            f"{source}: predictions for {len(unknown)} clip(s) not in the manifest: {listed}"
            + (f" ({hint})" if hint else "")
        )


def read_gaze(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """A gaze manifest or predictions file: (``manifest`` | ``predictions``, validated rows)."""
    from gaze.formats.convert import as_row
    from gaze.formats.jsonl import json_rows

    if path.is_file():
        first = json_rows(path)[:1]
        if first and "video" in first[0][1]:
            return "manifest", [as_row(r) for r in load_manifest(path, for_diagnosis=False)]
    return "predictions", [as_row(p) for p in load_predictions(path).values()]
