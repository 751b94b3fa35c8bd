"""The trust report of a probe run: how often a method finds what was injected into the user's
own footage (with a 95 % Wilson interval), how well its span fits, what it reports on the
untouched controls, whether it notices the semantic probes, and how much it varies when asked
again. No model is called: it reads the probe manifests and the reports.

Injected probes are scored by ``gaze bench score``'s own code (robogaze protocol, ``type``
judge: a probe is found when a reported event of the injected type overlaps its span), so
``gaze bench score PROBE/manifest.jsonl PROBE/run/reports --judge type --slice probe`` gives the
same detection rates (each variant holds one injection: its recall is 0 or 1)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gaze.bench.inputs import load_manifest, load_predictions
from gaze.bench.probe.make import ORIGINAL
from gaze.bench.score_cases import ClipCase, score_cases
from gaze.matching.similarity import make_judge
from gaze.metrics.proportion import wilson_interval
from gaze.schema.manifest import ManifestClip, Prediction

TRUST_FORMAT = 1
SAME_EVENT_IOU = 0.3
"""Temporal IoU at or above which two runs' events of one type count as the same event."""


def _predictions(reports: Path) -> dict[str, Prediction]:
    return load_predictions(reports) if reports.is_dir() and any(reports.glob("*.json")) else {}


def _rate(found: int, n: int) -> dict[str, Any]:
    low, high = wilson_interval(found, n)
    return {
        "found": found,
        "n": n,
        "rate": round(found / n, 4) if n else None,
        "ci95": [round(low, 4), round(high, 4)],
    }


def _found(detail: dict[str, Any], row: ManifestClip) -> float | None:
    """The IoU of the reported event matched to the row's injected event, or None if unfound."""
    index = row.metadata["injected"]
    return next((m["iou"] for m in detail["matched"] if m["ref"] == index), None)


def injected(rows: Sequence[ManifestClip], preds: dict[str, Prediction]) -> dict[str, Any]:
    """Detection per injected kind and false alarms on the controls."""
    cases = [
        ClipCase(r, list(preds[r.clip_id].events) if r.clip_id in preds else [], r.clip_id in preds)
        for r in rows
    ]
    scored = score_cases(cases, "robogaze", make_judge("type"), n_boot=0)
    detail = {d["clip_id"]: d for d in scored["per_clip"]}
    by_kind: dict[str, list[ManifestClip]] = defaultdict(list)
    for row in rows:
        by_kind[str(row.metadata.get("probe"))].append(row)
    kinds: dict[str, Any] = {}
    for kind, members in sorted(by_kind.items()):
        if kind == ORIGINAL:
            continue
        ran = [r for r in members if r.clip_id in preds]
        ious = [iou for r in ran if (iou := _found(detail[r.clip_id], r)) is not None]
        kinds[kind] = {
            **_rate(len(ious), len(ran)),
            "span_iou": round(sum(ious) / len(ious), 4) if ious else None,
            "type": members[0].events[members[0].metadata["injected"]].type,
            "no_report": len(members) - len(ran),
        }
    controls = [r for r in by_kind.get(ORIGINAL, []) if r.clip_id in preds]
    # on a control, an event that matches none of its known failures is a false alarm
    alarms = {
        r.clip_id: [preds[r.clip_id].events[i].type for i in detail[r.clip_id]["unmatched_pred"]]
        for r in controls
    }
    flagged = sorted(c for c, types in alarms.items() if types)
    return {
        "kinds": kinds,
        "controls": {
            "n": len(controls),
            "with_events": len(flagged),
            "events": sum(len(t) for t in alarms.values()),
            "by_type": dict(Counter(t for types in alarms.values() for t in types)),
            "clips": flagged,
        },
    }


def _final(pred: Prediction | None, score: str) -> float | None:
    if pred is None:
        return None
    if score == "ia":
        return pred.ia
    return pred.progress[-1] if pred.progress else None


def _reports_in(pred: Prediction, dimension: str) -> bool:
    """Whether a report has an event in ``dimension`` (as its own or a merged one's)."""
    return any(dimension in (e.dimension, *getattr(e, "dimensions", [])) for e in pred.events)


def semantic(
    rows: Sequence[ManifestClip], preds: dict[str, Prediction], controls: dict[str, Prediction]
) -> dict[str, Any]:
    """Per semantic kind: how often the method reported in the expected dimension, and how its
    score moved against the untouched clip's."""
    out: dict[str, Any] = {}
    by_kind: dict[str, list[ManifestClip]] = defaultdict(list)
    for row in rows:
        by_kind[str(row.metadata["probe"])].append(row)
    for kind, members in sorted(by_kind.items()):
        expects = members[0].metadata["expects"]
        ran = [r for r in members if r.clip_id in preds]
        noticed = [r for r in ran if _reports_in(preds[r.clip_id], expects["dimension"])]
        shifts = []
        for row in ran:
            control = controls.get(f"{row.metadata['source']}__{ORIGINAL}")
            before, after = (
                _final(control, expects["score"]),
                _final(preds[row.clip_id], expects["score"]),
            )
            if before is not None and after is not None:
                shifts.append(after - before)
        out[kind] = {
            **_rate(len(noticed), len(ran)),
            "dimension": expects["dimension"],
            "score": expects["score"],
            "score_shift": round(sum(shifts) / len(shifts), 4) if shifts else None,
            "score_fell": sum(1 for s in shifts if s < 0),
            "scored": len(shifts),
        }
    return out


def _same(a: Any, b: Any) -> bool:
    inter = max(0.0, min(a.end_s, b.end_s) - max(a.start_s, b.start_s))
    union = max(a.end_s, b.end_s) - min(a.start_s, b.start_s)
    iou = inter / union if union > 0 else float(a.start_s == b.start_s)
    return bool(a.type == b.type and iou >= SAME_EVENT_IOU)


def retest(runs_by_source: dict[str, list[Prediction]]) -> dict[str, Any]:
    """Test-retest over repeated runs of each control: events every run reports (stable) or only
    some (flaky), the spread of severities and scores."""
    stable = flaky = identical = 0
    severity_spread: list[float] = []
    score_spread: dict[str, list[float]] = defaultdict(list)
    for runs in runs_by_source.values():
        clusters: list[list[Any]] = []
        for run_index, pred in enumerate(runs):
            for event in pred.events:
                home = next((c for c in clusters if _same(c[0][1], event)), None)
                if home is None:
                    clusters.append(home := [])
                home.append((run_index, event))
        for cluster in clusters:
            seen = {i for i, _ in cluster}
            if len(seen) == len(runs):
                stable += 1
                severities = [e.severity for _, e in cluster]
                severity_spread.append(max(severities) - min(severities))
            else:
                flaky += 1
        identical += all(len({i for i, _ in c}) == len(runs) for c in clusters)
        for name in ("pa", "ia"):
            values = [getattr(p, name) for p in runs if getattr(p, name) is not None]
            if len(values) > 1:
                score_spread[name].append(max(values) - min(values))
        finals = [p.progress[-1] for p in runs if p.progress]
        if len(finals) > 1:
            score_spread["progress"].append(max(finals) - min(finals))
    total = stable + flaky
    return {
        "controls": len(runs_by_source),
        "runs_each": max((len(r) for r in runs_by_source.values()), default=0),
        "identical": identical,
        "stable_events": stable,
        "flaky_events": flaky,
        "flaky_share": round(flaky / total, 4) if total else None,
        "severity_spread_max": max(severity_spread, default=None),
        "score_spread_max": {k: round(max(v), 4) for k, v in score_spread.items()},
    }


def trust_report(folder: Path, method: str) -> dict[str, Any]:
    """The trust report of the probe run in ``folder`` (``gaze probe``'s layout)."""
    rows = load_manifest(folder / "manifest.jsonl", for_diagnosis=False)
    preds = _predictions(folder / "run" / "reports")
    report: dict[str, Any] = {
        "format": TRUST_FORMAT,
        "kind": "trust",
        "method": method,
        "sources": len({r.metadata.get("source") for r in rows}),
        **injected(rows, preds),
    }
    if (folder / "semantic.jsonl").exists():
        semantic_rows = load_manifest(folder / "semantic.jsonl", for_diagnosis=False)
        report["semantic"] = semantic(
            semantic_rows, _predictions(folder / "semantic" / "reports"), preds
        )
    if (folder / "repeats.jsonl").exists():
        repeated = _predictions(folder / "repeats" / "reports")
        runs: dict[str, list[Prediction]] = defaultdict(list)
        for row in rows:
            if row.metadata.get("probe") == ORIGINAL and row.clip_id in preds:
                runs[row.clip_id].append(preds[row.clip_id])
        for clip_id, pred in sorted(repeated.items()):
            base = clip_id.split("@r", 1)[0]
            if base in runs:
                runs[base].append(pred)
        report["retest"] = retest(dict(runs))
    report["headline"] = headline(report)
    return report


def headline(report: dict[str, Any]) -> list[str]:
    """The lines a user can quote."""
    sources, method = report["sources"], report["method"]
    lines = []
    for kind, k in report["kinds"].items():
        if k["n"]:
            low, high = k["ci95"]
            lines.append(
                f"on these {sources} clips, {method} finds {100 * k['rate']:.0f} % "
                f"[{100 * low:.0f}, {100 * high:.0f}] of injected {kind} ({k['found']}/{k['n']})"
            )
    controls = report["controls"]
    lines.append(
        f"{controls['with_events']} of {controls['n']} untouched clips got an event "
        f"({controls['events']} events in all)"
    )
    for kind, s in (report.get("semantic") or {}).items():
        if s["n"]:
            lines.append(f"{s['found']}/{s['n']} {kind} probes reported in {s['dimension']}")
    if report.get("skipped"):
        lines.append(f"{len(report['skipped'])} clips or probes skipped (reasons in trust.json)")
    retest_ = report.get("retest")
    if retest_ and retest_["runs_each"] > 1:
        lines.append(
            f"asked {retest_['runs_each']} times, {retest_['identical']} of "
            f"{retest_['controls']} clips got the same events every time"
        )
    return lines
