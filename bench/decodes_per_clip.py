"""How many times each clip is decoded in a batch run (`bench run`), with clips in flight at once.

Every clip of a run should be decoded exactly once, whatever the concurrency: its frames belong to
the run that diagnoses it. Prints decodes per clip and the longest event-loop stall.

    python bench/decodes_per_clip.py [--clips 8] [--in-flight 8]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import gaze.video.store as store
from gaze.bench.forge import forge_set
from gaze.bench.run import run_benchmark
from gaze.models.scripted import ScriptedBackbone
from gaze.settings.context import GazeContext
from gaze.video.decode_process import DecodeRequest


async def stall_watch(stop: asyncio.Event, worst: list[float]) -> None:
    """The longest gap between 10 ms ticks of the event loop (a blocked loop shows here)."""
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(0.01)
        worst[0] = max(worst[0], time.perf_counter() - before - 0.01)


async def measure(manifest: Path, out: Path, in_flight: int) -> tuple[Counter[str], float]:
    decodes: Counter[str] = Counter()
    real_job = store.DecodeJob

    class CountingJob(real_job):  # type: ignore[misc,valid-type]
        def __init__(self, request: DecodeRequest) -> None:
            decodes[Path(request.path).name] += 1
            super().__init__(request)

    store.DecodeJob = CountingJob  # type: ignore[misc]
    stop, worst = asyncio.Event(), [0.0]
    watcher = asyncio.create_task(stall_watch(stop, worst))
    try:
        await run_benchmark(
            manifest,
            "robogaze",
            out,
            GazeContext(use_cache=False),
            clip_concurrency=in_flight,
            backbones={"default": ScriptedBackbone(fallback_minimal=True, latency_s=0.05)},
        )
    finally:
        stop.set()
        await watcher
        store.DecodeJob = real_job  # type: ignore[misc]
    return decodes, worst[0]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=8)
    parser.add_argument("--in-flight", type=int, default=8)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        forge_set(Path(tmp) / "clips", count=args.clips, seed=11)
        manifest = Path(tmp) / "clips" / "manifest.jsonl"
        decodes, stall = asyncio.run(measure(manifest, Path(tmp) / "run", args.in_flight))
    total = sum(decodes.values())
    print(f"clips {args.clips}, in flight {args.in_flight}")
    print(
        f"decodes: {total} for {len(decodes)} clips ({total / max(1, len(decodes)):.2f} per clip)"
    )
    print(f"longest event-loop stall: {stall * 1000:.0f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
