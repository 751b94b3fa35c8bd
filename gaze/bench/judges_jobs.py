"""The judge-metric jobs: `progress metrics`, `bench agreement`, `bench direction`.

Bad rows are never dropped silently: invalid input fails naming the row (exit 2), and rows a
partial result can live without are listed as skipped with their reason."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gaze.bench.inputs import check_known_clips, load_manifest, load_predictions
from gaze.errors import GazeInputError
from gaze.formats.jsonl import json_rows
from gaze.metrics import RESAMPLES, direction, prm_compat, robojudge_compat
from gaze.metrics.agreement import axis_agreement, overall
from gaze.metrics.bootstrap import resample_counts
from gaze.metrics.progress import aggregate, opd_metrics, process
from gaze.schema.manifest import ManifestClip, Prediction


def _cases(
    curves: str | Path, rows: list[tuple[int, dict[str, Any]]] | None = None
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(where, case_id, row) of every row of a curves file (or of ``rows`` read from it); a
    missing or repeated case_id fails naming the line."""
    seen: set[str] = set()
    for number, row in json_rows(curves) if rows is None else rows:
        where = f"{curves} line {number}"
        case_id = str(row.get("case_id", "")).strip()
        if not case_id:
            raise GazeInputError(f"{where}: missing case_id")
        if case_id in seen:
            raise GazeInputError(f"{where}: duplicate case_id {case_id!r}")
        seen.add(case_id)
        yield where, case_id, row


MAX_PROGRESS_VALUE = 1000.0


def _curve(row: dict[str, Any], where: str) -> list[float]:
    values = row.get("progress")
    if not isinstance(values, list):
        raise GazeInputError(f"{where}: 'progress' must be a list of numbers")
    if not values:
        raise GazeInputError(f"{where}: 'progress' is empty")
    try:
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        raise GazeInputError(f"{where}: 'progress' holds a non-numeric value") from None
    if not all(
        math.isfinite(v) and not isinstance(x, bool) for v, x in zip(numbers, values, strict=True)
    ):
        raise GazeInputError(f"{where}: 'progress' holds NaN, infinity or a boolean")
    if any(abs(v) > MAX_PROGRESS_VALUE for v in numbers):
        raise GazeInputError(
            f"{where}: 'progress' holds a value beyond ±{MAX_PROGRESS_VALUE:g} "
            "(curves are 0-1 or 0-100, increments -100..100)"
        )
    return numbers


def progress_metrics(
    curves: str | Path,
    *,
    v1: bool = False,
    success_source: str = "curve",
    compat: str | None = None,
    source_format: str = "gaze",
) -> dict[str, Any]:
    toolkit_rows = None
    summary = None
    if source_format == "prm" and compat != "prm":
        # the toolkit's rows under gaze's own definitions: raw curves (inline or by path),
        # label words as 0/1, task_name and benchmark as the toolkit names them
        from gaze.formats.prm import convert_rows
        from gaze.formats.summary import ImportSummary

        summary = ImportSummary(source=f"prm:{curves}")
        _, converted = convert_rows(json_rows(curves), Path(curves), summary)
        toolkit_rows = list(enumerate(converted, start=1))
    if compat == "prm":
        if v1:
            raise GazeInputError("--compat prm reproduces the toolkit's v1.5 scorer: drop --v1")
        return prm_progress_metrics(curves, success_source=success_source)
    if compat is not None:
        raise GazeInputError(f"unknown --compat {compat!r} for progress metrics; known: prm")
    cases, by_model, by_group = [], defaultdict(list), defaultdict(list)
    for where, case_id, row in _cases(curves, toolkit_rows):
        values = _curve(row, where)
        kind = row.get("kind", "absolute")
        if kind not in ("absolute", "increments"):
            raise GazeInputError(f"{where}: kind must be 'absolute' or 'increments'")
        label = row.get("label")
        if success_source == "label":
            if not isinstance(label, bool | int) or label not in (0, 1):
                raise GazeInputError(f"{where}: --success-source label needs a 0/1 'label'")
            success: bool | None = bool(label)
        else:
            success = None
        processed = process(values, kind, v1=v1)
        metrics = opd_metrics(processed, success, v1=v1)
        model, task = str(row.get("model", "unknown")), str(row.get("task", "unknown"))
        cases.append(
            {
                "case_id": case_id,
                "model": model,
                "task": task,
                "progress_raw": values,
                "progress_processed": [round(float(x), 6) for x in processed],
                "metrics": metrics,
            }
        )
        by_model[model].append(metrics)
        by_group[(model, task)].append(metrics)
    if not cases:
        raise GazeInputError(f"{curves} has no curves")
    board: dict[str, list[dict[str, Any]]] = {"mean": [], "median": [], "groups": []}
    for model, rows in sorted(by_model.items()):
        agg = aggregate(rows)
        board["mean"].append({"model": model, "n": len(rows), **agg["mean"]})
        board["median"].append({"model": model, "n": len(rows), **agg["median"]})
    for (model, task), rows in sorted(by_group.items()):
        agg = aggregate(rows)
        board["groups"].append(
            {
                "model": model,
                "task": task,
                "n": len(rows),
                "mean": agg["mean"],
                "median": agg["median"],
            }
        )
    board["mean"].sort(key=lambda r: -(r["SR"] or 0.0))
    return {
        "mode": "v1" if v1 else "v2",
        "success_source": success_source,
        "cases": cases,
        "leaderboard": board,
        **({"import": summary.as_dict()} if summary is not None else {}),
    }


def prm_progress_metrics(curves: str | Path, *, success_source: str) -> dict[str, Any]:
    """``--compat prm``: the PRM-as-a-Judge toolkit's per-case metrics and leaderboards
    (``gaze.metrics.prm_compat``). Rows as gaze writes them or as the toolkit does
    (``gaze.formats.prm``): a processed curve is used as it is, a raw one is processed as gaze
    does (the same steps as the toolkit's)."""
    from gaze.formats.prm import case_fields, curve_values

    cases: list[dict[str, Any]] = []
    base_dir = Path(curves).parent
    for where, case_id, row in _cases(curves):
        values, processed = curve_values(row, where, base_dir)
        numbers = _curve({"progress": values}, where)
        if not processed:
            increments = row.get("kind") in ("increments", "delta")
            numbers = list(process(numbers, "increments") if increments else process(numbers))
        curve = [float(v) for v in numbers]
        cases.append(
            {
                "case_id": case_id,
                **case_fields(row),
                "curve": curve,
                "metrics": prm_compat.case_metrics(curve),
            }
        )
    if not cases:
        raise GazeInputError(f"{curves} has no curves")
    return {
        "mode": "v1.5",
        "compat": "prm: the PRM-as-a-Judge toolkit's scorer (docs/compat.md)",
        "success_source": "label" if success_source == "label" else "progress",
        "cases": [
            {
                "case_id": c["case_id"],
                "benchmark": c["benchmark"],
                "model": c["model"],
                "task": c["task"],
                "progress_processed": [round(v, 6) for v in c["curve"]],
                "metrics": c["metrics"],
            }
            for c in cases
        ],
        "leaderboard": prm_compat.leaderboards(cases, success_source),
    }


ROBOJUDGE_HINT = (
    "the manifest came from RoboJudge's gold: --compat robojudge matches ids and scores 0.0 "
    "as its scorer does; --format robojudge reads the judge's own file by gaze's protocol"
)


def agreement(
    manifest: str | Path,
    predictions: str | Path,
    *,
    n_boot: int = RESAMPLES,
    seed: int = 0,
    compat: str | None = None,
    source_format: str = "gaze",
) -> dict[str, Any]:
    """PA/IA agreement with the human scores; ``compat="robojudge"`` scores as RoboJudge's
    published code does (``gaze.metrics.robojudge_compat``); ``source_format="robojudge"``
    reads RoboJudge's gold and prediction files as they are (``gaze.formats.robojudge``)."""
    if compat not in (None, "robojudge"):
        raise GazeInputError(f"unknown --compat {compat!r} for agreement; known: robojudge")
    if source_format == "robojudge":
        return _robojudge_files_agreement(Path(manifest), Path(predictions), compat)
    if source_format != "gaze":
        raise GazeInputError(f"unknown --format {source_format!r}; known: gaze, robojudge")
    lowest = 0.0 if compat else 1.0  # RoboJudge's files hold predictions of 0.0, scored as such
    rows = load_manifest(manifest, for_diagnosis=False)
    preds = load_predictions(predictions)
    if compat == "robojudge":
        preds = _matched_as_robojudge(preds, rows, predictions)
    from_robojudge = any("robojudge" in row.metadata for row in rows)
    check_known_clips(rows, preds, predictions, hint=ROBOJUDGE_HINT if from_robojudge else "")
    pairs: dict[str, list[tuple[float, float, str]]] = {"pa": [], "ia": []}
    skipped: list[dict[str, str]] = []
    generators: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"pa": [], "ia": []})
    for row in rows:
        pred = preds.get(row.clip_id)
        for axis in ("pa", "ia"):
            human = getattr(row, axis)
            if human is not None and not 1 <= human <= 5:
                raise GazeInputError(
                    f"{manifest}: clip {row.clip_id}: human {axis} {human} is outside 1-5"
                )
            value = getattr(pred, axis) if pred is not None else None
            if value is not None and not lowest <= value <= 5:
                raise GazeInputError(
                    f"{predictions}: clip {row.clip_id}: {axis} {value} is outside {lowest:g}-5"
                    + (f" ({ROBOJUDGE_HINT})" if from_robojudge else "")
                )
            if value is not None:
                generators[row.generator or "unknown"][axis].append(value)
            if human is None:
                continue
            if value is None:
                skipped.append(
                    {
                        "clip_id": row.clip_id,
                        "axis": axis,
                        "reason": "no prediction" if pred is None else f"no {axis}",
                    }
                )
                continue
            pairs[axis].append((value, human, row.condition_id))
    result: dict[str, Any]
    if compat == "robojudge":
        result = robojudge_compat.scores(
            {axis: [(h, p) for p, h, _ in v] for axis, v in pairs.items()}
        )
    else:
        result = _gaze_agreement({axis: [(p, h) for p, h, _ in v] for axis, v in pairs.items()})
        result["ci"] = _agreement_ci(pairs, n_boot, seed)
    result["skipped"] = skipped
    result["leaderboard"] = sorted(
        (
            {
                "generator": g,
                "pa": _mean(v["pa"]),
                "ia": _mean(v["ia"]),
                "average": _mean([x for x in (_mean(v["pa"]), _mean(v["ia"])) if x is not None]),
                "n": max(len(v["pa"]), len(v["ia"])),
            }
            for g, v in generators.items()
        ),
        key=lambda r: -(r["average"] or 0.0),
    )
    return result


def _matched_as_robojudge(
    preds: dict[str, Prediction], rows: list[ManifestClip], source: str | Path
) -> dict[str, Prediction]:
    """Prediction ids matched to the manifest's as RoboJudge's scorer matches them, so files
    converted with ``gaze convert --from robojudge`` score as ``--format robojudge`` does."""
    from gaze.formats.robojudge import match_id

    known = {row.clip_id for row in rows}
    matched: dict[str, Prediction] = {}
    for clip_id, pred in preds.items():
        target = match_id(clip_id, known)
        if target in matched:
            raise GazeInputError(
                f"{source}: two predictions for clip {target!r} once ids are matched as "
                "RoboJudge's scorer matches them (score the judge's own file with "
                "--format robojudge, which counts each as a pair)"
            )
        matched[target] = pred
    return matched


def _gaze_agreement(pairs: dict[str, list[tuple[float, float]]]) -> dict[str, Any]:
    """gaze's agreement metrics of (prediction, human) pairs per axis, and overall."""
    arrays = {
        axis: (np.array([p for p, _ in v]), np.array([h for _, h in v]))
        for axis, v in pairs.items()
    }
    result: dict[str, Any] = {axis: axis_agreement(*arrays[axis]) for axis in ("pa", "ia")}
    result["overall"] = overall(result["pa"], result["ia"], arrays["pa"], arrays["ia"])
    return result


def _robojudge_files_agreement(gold: Path, preds: Path, compat: str | None) -> dict[str, Any]:
    """Agreement from RoboJudge's own files: its scorer's pairs, scored by its rules
    (``--compat robojudge``) or by gaze's, where a prediction outside 1-5 is left out and
    counted."""
    from gaze.formats.robojudge import read_pairs
    from gaze.formats.summary import ImportSummary

    summary = ImportSummary(source=f"robojudge:{gold} + {preds}")
    pairs = read_pairs(gold, preds, summary, free_text=compat == "robojudge")
    if not pairs["pa"] and not pairs["ia"]:
        raise GazeInputError(f"no prediction in {preds} matched a gold score in {gold}")
    result: dict[str, Any]
    if compat == "robojudge":
        result = robojudge_compat.scores(pairs)
    else:
        kept = {}
        for axis, found in pairs.items():
            kept[axis] = [(g, p) for g, p in found if 1 <= p <= 5 and 1 <= g <= 5]
            for _ in range(len(found) - len(kept[axis])):
                summary.skip(axis, "score outside 1-5 (gaze's protocol)")
        result = _gaze_agreement({axis: [(p, g) for g, p in v] for axis, v in kept.items()})
    result["import"] = summary.as_dict()
    result["skipped"] = []
    return result


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _agreement_ci(
    pairs: dict[str, list[tuple[float, float, str]]], n_boot: int, seed: int
) -> dict[str, dict[str, list[float | None]]]:
    """Cluster bootstrap over condition groups (resampled once, shared by both axes)."""
    if n_boot <= 0:
        return {}
    groups = sorted({g for v in pairs.values() for _, _, g in v})
    if not groups:
        return {}
    index = {g: i for i, g in enumerate(groups)}
    counts = resample_counts(len(groups), n_boot, seed)
    out: dict[str, dict[str, list[float | None]]] = {}
    for axis, items in pairs.items():
        if not items:
            continue
        member = np.array([index[g] for _, _, g in items])
        pred = np.array([p for p, _, _ in items])
        human = np.array([h for _, h, _ in items])
        samples: dict[str, list[float]] = defaultdict(list)
        for b in range(n_boot):
            weights = counts[b][member]
            take = np.repeat(np.arange(len(items)), weights)
            if take.size == 0:
                continue
            stats = axis_agreement(pred[take], human[take])
            for key in ("pearson", "spearman", "exact", "within_1", "mse"):
                if stats[key] is not None:
                    samples[key].append(float(stats[key]))  # type: ignore[arg-type]
        out[axis] = {
            key: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))]
            for key, v in samples.items()
            if v
        }
    return out


def direction_job(manifest: str | Path, curves: str | Path) -> dict[str, Any]:
    rows = {r.clip_id: r for r in load_manifest(manifest, for_diagnosis=False)}
    episodes, skipped = [], []
    seen: set[str] = set()
    for number, row in json_rows(curves):
        where = f"{curves} line {number}"
        case_id = str(row.get("case_id") or row.get("clip_id") or "").strip()
        if case_id not in rows:
            raise GazeInputError(f"{where}: case {case_id!r} is not in the manifest")
        seen.add(case_id)
        intervals = [(i.start_s, i.end_s, i.label) for i in rows[case_id].progress_intervals]
        if not intervals:
            skipped.append({"case_id": case_id, "reason": "no progress_intervals in the manifest"})
            continue
        episodes.append((_curve(row, where), intervals))
    result = direction.score(episodes)
    result["skipped"] = skipped
    result["missing_curves"] = sorted(
        k for k, r in rows.items() if r.progress_intervals and k not in seen
    )
    return result
