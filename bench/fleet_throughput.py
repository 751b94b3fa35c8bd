"""Clips per minute of `gaze bench run` against one model server and against a fleet of three,
each a stand-in OpenAI-compatible server on 127.0.0.1 that serves ``--capacity`` requests at
once and takes ``--latency`` seconds per request (a GPU server's batch, in miniature), beside
what the servers could do at most: their slots / latency, in clips per minute at the requests
per clip the run made (``ratio``: how full gaze kept them, start and end of the run included).

    python bench/fleet_throughput.py [--clips 8] [--latency 0.5] [--capacity 4]

The fleet is given as ``--base-url`` three times: requests are spread sticky by clip, least
outstanding past a slack, with failover (``gaze.models.pool``).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, redirect_stderr
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.standin, the stand-in
sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_latency import served  # noqa: E402

from gaze.bench.forge import forge_set  # noqa: E402
from gaze.cli.main import run  # noqa: E402
from tests.standin import Reply, StandIn  # noqa: E402


def limited(latency: float, capacity: int) -> Any:
    """A server that works on ``capacity`` requests at once; the others queue."""
    answer = served(0.0)
    slots = threading.Semaphore(capacity)

    def respond(body: Any) -> Reply:
        with slots:
            time.sleep(latency)
            return answer(body)

    return respond


def clips_per_minute(
    manifest: Path, out: Path, urls: list[str], extra: list[str]
) -> tuple[float, float]:
    """(clips done per minute of wall time, requests per clip) of one `gaze bench run`."""
    args = ["bench", "run", str(manifest), "--out", str(out), "--model", "openai:bench"]
    args += ["--no-cache", *extra]
    for url in urls:
        args += ["--base-url", url]
    started = time.perf_counter()
    with redirect_stderr(io.StringIO()) as err:
        code = run(args)
    wall = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"bench run failed: {err.getvalue()[-400:]}")
    summary = json.loads((out / "run.json").read_text())
    return summary["done"] / wall * 60, summary["calls"] / max(1, summary["done"])


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--capacity", type=int, default=4)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        forge_set(Path(tmp) / "forge", count=args.clips, seed=11)
        manifest = Path(tmp) / "forge" / "manifest.jsonl"
        servers = [
            stack.enter_context(StandIn(responder=limited(args.latency, args.capacity)))
            for _ in range(3)
        ]
        urls = [s.url + "/v1" for s in servers]
        print(
            f"{args.clips} forge clips of 8 s; each server: {args.capacity} requests at once, "
            f"{args.latency:g} s each; {args.clips} clips in flight"
        )
        print("| servers | clips/min | requests/clip | servers' most clips/min | ratio |")
        print("|---:|---:|---:|---:|---:|")
        for count in (1, 3):
            extra = ["--clips-in-flight", str(args.clips), "--concurrency", "64"]
            rate, per_clip = clips_per_minute(
                manifest, Path(tmp) / f"run{count}", urls[:count], extra
            )
            most = count * args.capacity / args.latency * 60 / per_clip
            print(
                f"| {count} | {rate:.1f} | {per_clip:.1f} | {most:.1f} | {rate / most:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
