"""The pixel default's probes on real footage: every clip of ../shared/clips gets each injected
probe kind (``gaze probe``'s, the same code), the pixel default runs over the variants and the
untouched re-encodes, and the trust report's figures are printed per probe kind (detection with
its 95 % Wilson interval, span IoU) with the false alarms on untouched clips.

    python bench/probe_real.py [--shared DIR] [--seed 0] [--max-seconds 15] [--out DIR]
                               [--labels bench/shared_clip_labels.jsonl]

The shared clips come without annotations. ``--labels`` holds the failures we found in them by
looking, frame by frame, at what the pixel default reported on the untouched clips (each with
what was seen, by whom and when): they are the clips' known failures, kept in every variant's
truth as ``gaze probe`` does with a manifest's events, so a reported event counts as a false
alarm only where it matches none of them. Beyond the clips where something was found, only
reported events were reviewed: a failure the pixel default does not report is in no label.

Targets (issue 36): detection >= 0.90 for freeze, stutter, glitch and corruption, >= 0.80 for
vanish, appear and jump, at most one false alarm per 20 untouched clips.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from gaze.bench.probe.make import (
    FRAME_LEVEL,
    INJECTED,
    OBJECT_LEVEL,
    Source,
    make_probe_set,
    sources_of,
)
from gaze.bench.probe.run import run_probe
from gaze.bench.probe.trust import trust_report
from gaze.settings.context import GazeContext

TARGETS = {**dict.fromkeys(FRAME_LEVEL, 0.90), **dict.fromkeys(OBJECT_LEVEL, 0.80)}
LABELS = Path(__file__).resolve().parent / "shared_clip_labels.jsonl"


def labelled(sources: list[Source], labels: Path) -> list[Source]:
    """The sources with the failures ``labels`` knows in them (by file name)."""
    known: dict[str, list[dict[str, Any]]] = {}
    for line in labels.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            known[row["file"]] = row["events"]
    return [dataclasses.replace(s, events=tuple(known.get(s.path.name, ()))) for s in sources]


def main() -> None:
    here = Path(__file__).resolve().parents[2] / "shared" / "clips"
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=here)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=15.0)
    parser.add_argument("--out", type=Path, default=None, help="keep the probe folder here")
    parser.add_argument("--labels", type=Path, default=LABELS, help="known failures (JSONL)")
    args = parser.parse_args()
    if not args.shared.is_dir():
        raise SystemExit(f"no shared clips at {args.shared}")
    folder = args.out or Path(tempfile.mkdtemp(prefix="probe-real-")) / "p"
    started = time.perf_counter()
    sources = labelled(sources_of(args.shared, None), args.labels)
    known = sum(e["start_s"] < args.max_seconds for s in sources for e in s.events)
    made = make_probe_set(
        sources,
        folder,
        seed=args.seed,
        kinds=list(INJECTED),
        semantic=[],
        max_seconds=args.max_seconds,
    )
    made_s = time.perf_counter() - started
    summaries = asyncio.run(
        run_probe(folder, "pixel", GazeContext(), repeat=0, samples=1, clips_in_flight=2)
    )
    report = trust_report(folder, "pixel")
    print(f"{report['sources']} real clips (first {args.max_seconds:.0f} s each), seed {args.seed}")
    ran_s = time.perf_counter() - started - made_s
    print(f"probes made in {made_s:.0f} s, run and scored in {ran_s:.0f} s")
    print()
    print("| probe | type | found | rate | 95 % | span IoU | target |")
    print("|---|---|---:|---:|---|---:|---:|")
    for kind, k in report["kinds"].items():
        low, high = k["ci95"]
        target = TARGETS.get(kind)
        mark = (
            ""
            if target is None
            else (f">= {target:.2f}" + (" met" if k["rate"] >= target else " missed"))
        )
        span = "-" if k["span_iou"] is None else f"{k['span_iou']:.2f}"
        print(
            f"| {kind} | {k['type']} | {k['found']}/{k['n']} | {k['rate']:.2f} | "
            f"[{low:.2f}, {high:.2f}] | {span} | {mark} |"
        )
    controls = report["controls"]
    print()
    print(
        f"false alarms on untouched clips: {controls['events']} events on "
        f"{controls['with_events']} of {controls['n']} clips ({json.dumps(controls['by_type'])}); "
        f"{known} known failures from {args.labels.name} in the stretches probed"
    )
    for clip_id in controls["clips"]:
        print(f"  {clip_id}")
    for clip_id, reason in sorted(made.skipped.items()):
        print(f"skipped {clip_id}: {reason}")
    failed = {k: v for s in summaries.values() for k, v in s.failed.items()}
    for clip_id, reason in sorted(failed.items()):
        print(f"failed {clip_id}: {reason}")


if __name__ == "__main__":
    main()
