"""The `bench score` job: read manifest and predictions, build the judge, score, write."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gaze.atomic import atomic_write_text
from gaze.bench.inputs import check_known_clips, load_manifest, load_predictions
from gaze.bench.score_cases import ClipCase, paired_difference, score_cases
from gaze.errors import GazeInputError
from gaze.matching.similarity import Recorder, SimilarityJudge, make_judge
from gaze.metrics import RESAMPLES
from gaze.schema.manifest import ManifestClip, Prediction


def build_judge(
    spec: str, model: str | None = None, base_url: str | None = None
) -> SimilarityJudge:
    if spec != "llm":
        return make_judge(spec)
    from gaze.bench.llm_judge import LLMJudge
    from gaze.environment import ENVIRONMENT
    from gaze.settings.caller import build_caller
    from gaze.settings.context import GazeContext

    if not model:
        raise GazeInputError(
            f"--judge llm needs --model PROVIDER:MODEL (or {ENVIRONMENT['model']})"
        )
    return LLMJudge(build_caller(GazeContext(model=model, base_url=base_url)))


def _write_judged(recorder: Recorder, judged_out: str | Path | None) -> None:
    """Every pair the judge scored, as a table ``--judge table:FILE`` replays."""
    if judged_out is not None:
        atomic_write_text(judged_out, "".join(line + "\n" for line in recorder.table_lines()))


FLAGS_COUNTED = ("parse_failed", "partial")
"""Report flags whose clips ``bench score`` counts (their events are scored as they are)."""


def run_score(
    manifest: str | Path,
    predictions: str | Path,
    *,
    protocol: str = "robogaze",
    judge: str = "lexical",
    n_boot: int = RESAMPLES,
    seed: int = 0,
    slice_fields: Sequence[str] = (),
    model: str | None = None,
    base_url: str | None = None,
    judged_out: str | Path | None = None,
    versus: str | Path | None = None,
    source_format: str = "gaze",
) -> dict[str, Any]:
    imported = None
    if source_format == "robogaze":  # a folder (or file) of RoboGaze's ground-truth clip files
        from gaze.formats.robogaze import read_manifest

        rows, summary = read_manifest(Path(manifest), Path(manifest).resolve().parent)
        imported = summary.as_dict()
    elif source_format == "glide":  # groundtruth.json and batch_report.json, untyped events
        rows, preds, imported = _glide_files(Path(manifest), Path(predictions))
    elif source_format == "gaze":
        rows = load_manifest(manifest, for_diagnosis=False)
    else:
        raise GazeInputError(f"unknown --format {source_format!r}; known: gaze, robogaze, glide")
    if source_format != "glide":
        preds = load_predictions(predictions)
    else:  # as GLiDE does, reports for videos the ground truth lacks are ignored (counted)
        known = {r.clip_id for r in rows}
        unknown = sorted(set(preds) - known)
        preds = {k: v for k, v in preds.items() if k in known}
        assert imported is not None
        imported["predicted_only"] = unknown
    check_known_clips(rows, preds, predictions)
    other = None
    if versus is not None:
        other = load_predictions(versus)
        check_known_clips(rows, other, versus)
    if protocol == "glide":
        # as GLiDE does: only clips present in both files are scored; the rest is counted
        left_out = [r.clip_id for r in rows if r.clip_id not in preds]
        rows = [r for r in rows if r.clip_id in preds]
        if not rows:
            raise GazeInputError("no clip is present in both the manifest and the predictions")
    else:
        left_out = []
    missing = [r.clip_id for r in rows if r.clip_id not in preds]
    cases = [
        ClipCase(r, list(preds[r.clip_id].events) if r.clip_id in preds else [], r.clip_id in preds)
        for r in rows
    ]
    recorder = Recorder(build_judge(judge, model, base_url))
    try:
        result = _scored(cases, protocol, recorder, n_boot, seed, slice_fields, other, versus)
    finally:
        closing = getattr(recorder.judge, "close", None)
        if closing is not None:
            closing()
    if imported is not None:
        result["import"] = imported
    result["missing_predictions"] = missing
    result["n_missing_predictions"] = len(missing)
    # flagged clips are scored as they are (the paper's protocol), and counted here
    for flag in FLAGS_COUNTED:
        flagged = [r.clip_id for r in rows if r.clip_id in preds and flag in preds[r.clip_id].flags]
        result[f"n_{flag}"] = len(flagged)
        result[flag] = flagged
    if protocol == "glide":
        result["n_left_out"] = len(left_out)
        result["left_out"] = left_out
    _write_judged(recorder, judged_out)
    return result


def _scored(
    cases: list[ClipCase],
    protocol: str,
    recorder: Recorder,
    n_boot: int,
    seed: int,
    slice_fields: Sequence[str],
    other: dict[str, Any] | None,
    versus: str | Path | None,
) -> dict[str, Any]:
    """The scores of ``cases`` and, with ``other`` predictions, the paired comparison: every
    judging of the run, so the judge is closed once after them."""
    result = score_cases(
        cases, protocol, recorder, n_boot=n_boot, seed=seed, slice_fields=slice_fields
    )
    if other is not None:
        other_cases = [
            ClipCase(
                c.row,
                list(other[c.row.clip_id].events) if c.row.clip_id in other else [],
                c.row.clip_id in other,
            )
            for c in cases
        ]
        result["versus"] = {
            "predictions": str(versus),
            **paired_difference(cases, other_cases, protocol, recorder, n_boot, seed),
        }
    return result


def _description_judge(
    judge: str, model: str | None, base_url: str | None, why_not_types: str
) -> Recorder:
    """The judge of a peer's scorer, which compares descriptions: one that reads failure types
    is refused in one line."""
    recorder = Recorder(build_judge(judge, model, base_url))
    if recorder.reads != "description":
        raise GazeInputError(f"--judge {judge} reads failure types; {why_not_types}")
    return recorder


def _glide_files(
    reference: Path, predictions: Path
) -> tuple[list[ManifestClip], dict[str, Prediction], dict[str, Any]]:
    """GLiDE's two files as gaze rows, read as ``gaze convert --from glide`` reads them, and
    their import summaries."""
    from gaze.formats.glide import gaze_models
    from gaze.formats.summary import ImportSummary

    truth, found = ImportSummary(source=str(reference)), ImportSummary(source=str(predictions))
    rows = gaze_models(reference, reference.resolve().parent, True, truth)
    preds = gaze_models(predictions, predictions.resolve().parent, False, found)
    summaries = {"reference": truth.as_dict(), "predictions": found.as_dict()}
    return rows, {p.clip_id: p for p in preds}, summaries


def run_glide_code(
    reference: str | Path,
    predictions: str | Path,
    *,
    judge: str = "lexical",
    model: str | None = None,
    base_url: str | None = None,
    judged_out: str | Path | None = None,
) -> dict[str, Any]:
    """GLiDE's ``groundtruth.json`` and ``batch_report.json`` scored as GLiDE's own code does
    (``gaze.metrics.glide_compat``); the rating of a pair is round(5 s) of the judge's s."""
    import numpy as np

    from gaze.formats.glide import read_glide
    from gaze.metrics.glide_compat import glide_code_score

    refs, ref_summary = read_glide(reference)
    preds, pred_summary = read_glide(predictions)
    recorder = _description_judge(judge, model, base_url, "GLiDE's bugs have none")

    def rate(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return np.rint(5.0 * np.asarray(recorder.score(pairs), dtype=np.float64))

    result = glide_code_score(refs, preds, rate)
    result["judge"] = recorder.name
    result["import"] = {"reference": ref_summary.as_dict(), "predictions": pred_summary.as_dict()}
    _write_judged(recorder, judged_out)
    return result


def _has_reports(path: Path) -> bool:
    return path.is_dir() and next(path.rglob("report.json"), None) is not None


def run_robogaze_code(
    manifest: str | Path,
    predictions: str | Path,
    *,
    source_format: str = "gaze",
    judge: str = "lexical",
    model: str | None = None,
    base_url: str | None = None,
    judged_out: str | Path | None = None,
) -> dict[str, Any]:
    """Scored as RoboGaze's original ``scripts/evaluate.py`` scores
    (``gaze.metrics.robogaze_compat``). MANIFEST is a gaze manifest, or with ``--format
    robogaze`` a folder of RoboGaze files (the original code's ``glitches`` files or the
    project page's clip files); PREDICTIONS are gaze predictions, or a folder of the original
    code's ``report.json`` files. gaze's spans become frames as the original turns times into
    frames: ``round(t * fps)`` with the clip's fps."""
    from gaze.formats import robogaze_code as code
    from gaze.formats.summary import ImportSummary
    from gaze.metrics.robogaze_compat import robogaze_code_score

    manifest, predictions = Path(manifest), Path(predictions)
    truth_summary = ImportSummary(source=str(manifest))
    rows: list[ManifestClip] = []
    if source_format == "robogaze":
        truth = code.read_ground_truth(manifest, truth_summary)
        if not truth:  # no 'glitches' files: the project page's clip files
            from gaze.formats.robogaze import read_manifest

            rows, truth_summary = read_manifest(manifest, manifest.resolve().parent)
    else:
        rows = load_manifest(manifest, for_diagnosis=False)
        truth = []
    fps_of: dict[str, float | None] = {c.video_id: c.fps for c in truth}
    for row in rows:
        if row.fps is None:
            raise GazeInputError(f"clip {row.clip_id}: no fps; robogaze-code scores frames")
        defaulted = {i for i in row.metadata.get("severity_defaulted", []) if isinstance(i, int)}
        truth.append(
            code.from_gaze(row.clip_id, row.instruction, row.events, row.fps, defaulted, "G")
        )
        fps_of[row.clip_id] = row.fps
    pred_summary = ImportSummary(source=str(predictions))
    if _has_reports(predictions):
        reports = code.read_reports(predictions, pred_summary)
    else:
        reports = {}
        for clip_id, pred in load_predictions(predictions).items():
            pred_summary.read += 1
            fps = fps_of.get(clip_id)
            if fps is None:
                pred_summary.skip(clip_id, "no fps for this clip's ground truth")
                continue
            reports[clip_id] = code.from_gaze(clip_id, "", pred.events, fps, set(), "P")
            pred_summary.written += 1
    pairs, no_report, no_truth = code.pair_clips(truth, reports)
    if not pairs:
        raise GazeInputError("no clip has both a ground truth and a prediction")
    recorder = _description_judge(judge, model, base_url, "robogaze-code judges descriptions")
    result = robogaze_code_score(pairs, recorder.score)
    result["judge"] = recorder.name
    result["left_out"] = {"reference_only": no_report, "predicted_only": no_truth}
    result["import"] = {"reference": truth_summary.as_dict(), "predictions": pred_summary.as_dict()}
    _write_judged(recorder, judged_out)
    return result
