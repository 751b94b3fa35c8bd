"""How close the diagnosis graph gets to its critical path, with a backbone of fixed latency.

    python bench/graph_latency.py [--latency 0.5] [--concurrency 32] [--durations 10 30 60]

A scripted backbone sleeps ``latency`` per call and answers with small valid outputs (each
specialist proposes one hypothesis so the critic runs too). The critical path is five calls
(grounding -> observe -> router -> specialist -> critic) whatever the clip length; the figure
of merit is wall / (critical-path calls x latency), target <= 1.3. gaze's own overhead is the
wall time not spent waiting on the backbone along that path: decode, encode, pixel signals,
graph bookkeeping.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gaze.api import adiagnose
from gaze.bench.forge import forge_clip
from gaze.graph.context import GazeContext
from gaze.models.protocol import ModelRequest, TextPart
from gaze.models.scripted import ScriptedBackbone, minimal_instance
from gaze.video.clip import open_clip
from gaze.video.windows import SamplingSettings

CRITICAL_PATH_CALLS = 5


def responder(request: ModelRequest) -> Any:
    text = "\n".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))
    if request.role == "specialist":
        span = re.search(r"Segment: seg\d+ \(([\d.]+)-([\d.]+) s", text)
        first_type = request.json_schema["$defs"]  # type: ignore[index]
        enum = next(
            v["properties"]["type"]["enum"]
            for k, v in first_type.items()
            if k.startswith("Hypothesis_")
        )
        start = float(span[1]) if span else 0.0
        return {
            "hypotheses": [
                {
                    "type": enum[0],
                    "start_s": start,
                    "end_s": start + 1.0,
                    "explanation": "bench",
                    "evidence": [],
                    "objects": ["bench"],
                    "severity": 2,
                    "confidence": 0.9,
                }
            ]
        }
    if request.role == "critic":
        count = len(re.findall(r"^\[\d+\]", text, re.MULTILINE))
        return {
            "verdicts": [
                {"index": i, "decision": "accept", "reason": "bench", "confidence": 0.9}
                for i in range(count)
            ]
        }
    assert request.json_schema is not None
    return minimal_instance(request.json_schema)


async def one(clip: Path, latency: float, concurrency: int) -> dict[str, float]:
    backbone = ScriptedBackbone(responder, model="bench", latency_s=latency)
    context = GazeContext(use_cache=False, concurrency=concurrency)
    started = time.perf_counter()
    report = await adiagnose(
        clip, "put the block on the plate", backbones={"default": backbone}, context=context
    )
    wall = time.perf_counter() - started
    ideal = max(CRITICAL_PATH_CALLS * latency, 1e-9)
    return {
        "calls": len(backbone.requests),
        "wall": wall,
        "ratio": wall / ideal,
        "overhead": max(0.0, wall - ideal) / wall,
        "events": len(report.events),
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 32])
    parser.add_argument("--durations", type=float, nargs="+", default=[10, 30, 60])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm.mp4"  # pay imports and first-use costs outside the timing
        forge_clip(warm, seed=2, failures=[])
        asyncio.run(one(warm, 0.0, 4))
        print(
            f"backbone latency {args.latency:g} s per call; critical path "
            f"{CRITICAL_PATH_CALLS} calls = {CRITICAL_PATH_CALLS * args.latency:g} s"
        )
        print(
            f"{'clip':>6s} {'conc':>5s} {'calls':>6s} {'wall s':>7s} {'wall/ideal':>11s} "
            f"{'overhead':>9s} {'decode+encode s':>16s}"
        )
        for duration in args.durations:
            clip = Path(tmp) / f"clip_{duration:g}s.mp4"
            forge_clip(clip, seed=1, failures=[], duration_s=duration)
            t0 = time.perf_counter()
            open_clip(clip, SamplingSettings(), encode=True)
            decode = time.perf_counter() - t0
            for concurrency in args.concurrency:
                figures = asyncio.run(one(clip, args.latency, concurrency))
                print(
                    f"{duration:>5g}s {concurrency:>5d} {figures['calls']:>6.0f} "
                    f"{figures['wall']:>7.2f} {figures['ratio']:>11.2f} "
                    f"{figures['overhead']:>8.0%} {decode:>16.2f}"
                )


if __name__ == "__main__":
    main(sys.argv[1:])
