"""Pixel evidence on forge clips (known truth) and on the shared real clips (false alarms, speed).

    python bench/pixel_evidence.py [--count 64] [--seed 11] [--shared ../shared/clips]

Forge: a reference event is recalled when a predicted event of the same type overlaps it in time
(within one frame); predictions matching no reference of their type are false alarms. Clean clips
report how many events they raised. Real clips have no truth here: the events they raise are
listed so a reader can judge them, with decode+signal time per clip.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from gaze.bench.forge import FAILURE_TYPES, forge_set
from gaze.pixel_diagnosis import diagnose_pixels
from gaze.schema.inputs import ClipInput

TOLERANCE_S = 0.1


def overlaps(a, b) -> bool:
    return a.start_s <= b.end_s + TOLERANCE_S and b.start_s <= a.end_s + TOLERANCE_S


def forge_figures(count: int, seed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        rows = forge_set(Path(tmp), count, seed)
        forge_s = time.perf_counter() - t0
        hits, totals, false_alarms, clean_events = Counter(), Counter(), Counter(), []
        seconds = []
        for row in rows:
            t0 = time.perf_counter()
            report = diagnose_pixels(
                ClipInput(
                    clip_id=row.clip_id,
                    video=str(Path(tmp) / row.video),
                    instruction=row.instruction,
                )
            )
            seconds.append(time.perf_counter() - t0)
            if not row.events:
                clean_events.append(len(report.events))
            for ref in row.events:
                totals[ref.type] += 1
                hits[ref.type] += any(
                    p.type == ref.type and overlaps(p, ref) for p in report.events
                )
            for pred in report.events:
                if not any(r.type == pred.type and overlaps(pred, r) for r in row.events):
                    false_alarms[pred.type] += 1
    print(
        f"forge: {count} clips (seed {seed}), forged in {forge_s:.1f} s, "
        f"diagnosed in {sum(seconds):.1f} s ({sum(seconds) / count:.2f} s/clip)"
    )
    print(f"{'type':24s} {'recall':>12s} {'false alarms':>13s}")
    for ftype in FAILURE_TYPES:
        print(
            f"{ftype:24s} {hits[ftype]:>5d}/{totals[ftype]:<3d}"
            f"{hits[ftype] / max(totals[ftype], 1):>5.2f} {false_alarms[ftype]:>13d}"
        )
    recalled, total = sum(hits.values()), sum(totals.values())
    print(
        f"{'all injected':24s} {recalled:>5d}/{total:<3d}{recalled / max(total, 1):>5.2f}"
        f" {sum(false_alarms.values()):>13d}"
    )
    noisy = sum(1 for n in clean_events if n)
    print(
        f"clean clips: {len(clean_events)}, with any event: {noisy} "
        f"({sum(clean_events)} events; false-alarm rate {noisy / max(len(clean_events), 1):.2f})"
    )


def shared_figures(folder: Path) -> None:
    manifest = folder / "manifest.jsonl"
    if not manifest.is_file():
        print(f"shared clips: not found at {folder}; skipped")
        return
    rows = [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]
    print(f"\nshared real/generated clips: {len(rows)}")
    total_video, total_s = 0.0, 0.0
    for row in rows:
        t0 = time.perf_counter()
        report = diagnose_pixels(
            ClipInput(
                clip_id=row["file"], video=str(folder / row["file"]), instruction=row["instruction"]
            )
        )
        spent = time.perf_counter() - t0
        total_s += spent
        total_video += report.clip.duration_s if report.clip else 0.0
        events = ", ".join(f"{e.type}@{e.start_s:g}" for e in report.events) or "-"
        print(
            f"  {row['file'][:52]:52s} {report.clip.duration_s:7.1f} s video "
            f"{spent:5.2f} s  {events}"
        )
    print(
        f"  total: {total_video:.0f} s of video in {total_s:.1f} s "
        f"({total_video / max(total_s, 1e-9):.0f}x real time)"
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "clips"
    )
    args = parser.parse_args(argv)
    forge_figures(args.count, args.seed)
    shared_figures(args.shared)


if __name__ == "__main__":
    main(sys.argv[1:])
