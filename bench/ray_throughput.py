"""Clips per minute of `gaze bench run` on the local executor and on Ray with 1 and 2 workers,
against a stand-in OpenAI-compatible server on 127.0.0.1 that takes a fixed time per call.

    python bench/ray_throughput.py [--clips 8] [--latency 0.5] [--per-worker 1]

Ray runs locally (``ray.init()`` on this machine's CPUs). Each worker is one Ray actor holding
one CPU and running ``--per-worker`` clips at once; the local executor runs the same number of
clips at once as the widest Ray set-up, in one process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.standin, the stand-in
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fleet_throughput import clips_per_minute  # noqa: E402
from graph_latency import served  # noqa: E402

from gaze.bench.forge import forge_set  # noqa: E402
from tests.standin import StandIn  # noqa: E402


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--per-worker", type=int, default=1)
    args = parser.parse_args(argv)
    import ray

    with tempfile.TemporaryDirectory() as tmp, StandIn(responder=served(args.latency)) as server:
        forge_set(Path(tmp) / "forge", count=args.clips, seed=11)
        manifest = Path(tmp) / "forge" / "manifest.jsonl"
        url = server.url + "/v1"
        ray.init(include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        try:
            print(
                f"{args.clips} forge clips of 8 s, {args.latency:g} s per call, "
                f"{args.per_worker} clip(s) at once per worker"
            )
            print("| executor | workers | clips/min |")
            print("|---|---:|---:|")
            widest = 2 * args.per_worker
            local, _ = clips_per_minute(
                manifest, Path(tmp) / "local", [url], ["--clips-in-flight", str(widest)]
            )
            print(f"| local | - | {local:.1f} |", flush=True)
            for workers in (1, 2):
                extra = ["--executor", "ray", "--ray-workers", str(workers)]
                extra += ["--clips-in-flight", str(args.per_worker)]
                rate, _ = clips_per_minute(manifest, Path(tmp) / f"ray{workers}", [url], extra)
                print(f"| ray | {workers} | {rate:.1f} |", flush=True)
        finally:
            ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
