"""Clips per minute of `gaze bench run` against model servers of 4 to 64 slots, beside what the
servers could do at most: how full gaze keeps them.

    python bench/fleet_throughput.py [--slots 4 16 64] [--rate 8] [--clips-per-slot 3]
                                     [--min-clips 48] [--servers 1 3] [--kinds queue 429]

Each server is a stand-in OpenAI-compatible server on 127.0.0.1 with ``slots`` requests served
at once, each taking ``slots / rate`` seconds, so every size serves ``rate`` requests a second
at most (a GPU server's batch, in miniature; its clips/min at most is ``rate`` over the run's
requests per clip). Two kinds:

- ``queue``: requests past its slots wait in the server's queue (vLLM past ``max_num_seqs``);
- ``429``: requests past its slots are refused with 429 and a Retry-After of ``slots / rate``
  seconds (a hosted API's concurrency limit).

Columns: ``whole run`` is clips done over wall time (start, the first clips' whole chain of
calls, and the last clips' included); ``steady`` is the servers' work over the middle half of
the run (from the end of the first quarter of its requests to the end of the third quarter):
requests served per second there, as clips/min and as the share of the servers' slots busy.
``queued most`` is the most requests waiting in one server's queue at once (``queue``),
``queued steady`` the queue a request met over the middle half of the run (upper quartile;
a queueing server reports its queue on ``/metrics`` as vLLM does, unless ``--no-metrics``), and
``refused`` the refusals per request served (``429``): a server kept full but not flooded has
a steady share near 1 and few of either. ``queue reads`` counts the reads of the servers'
``/metrics`` per request served (``queue``). ``first request s`` is when the servers got their
first request, counted from the start of the run. ``CPU ms/request`` is this process's CPU time
over the run (gaze's client and the stand-in servers' threads; the clips' decoding children
not counted) per request served. ``requests/clip`` counts the requests served
(start-up checks included, refusals not); ``partial clips`` the reports that lost a part (a
call that ran out of retries).

The run has ``clips-per-slot x slots x servers`` clips, at least ``--min-clips`` (8 s forge
clips, 24 distinct ones repeated under their own ids), all in flight, ``--concurrency`` 256; a
fleet is given as ``--base-url`` once per server.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from contextlib import ExitStack, redirect_stderr
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.standin, the stand-in
sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_latency import served  # noqa: E402

from gaze.bench.forge import forge_set  # noqa: E402
from gaze.cli.main import run  # noqa: E402
from tests.standin import Queueing, StandIn  # noqa: E402

ANSWER = served(0.0)
"""Small valid replies, each specialist proposing one hypothesis (``graph_latency``)."""


def steady(servers: list[Queueing]) -> float:
    """The share of the servers' slots busy over the middle half of the run's requests."""
    ends = sorted(end for s in servers for _, end in s.served)
    if len(ends) < 8:
        return float("nan")
    lo, hi = ends[len(ends) // 4], ends[3 * len(ends) // 4]
    busy = sum(max(0.0, min(end, hi) - max(start, lo)) for s in servers for start, end in s.served)
    return busy / (sum(s.slots for s in servers) * (hi - lo))


def bench_run(manifest: Path, out: Path, urls: list[str]) -> tuple[float, int, float, float]:
    """(clips done per minute of wall time, clips whose report is partial, when it started on
    the stand-ins' clock, this process's CPU seconds over the run) of one `gaze bench run`."""
    args = ["bench", "run", str(manifest), "--out", str(out), "--model", "openai:bench"]
    args += ["--no-cache", "--clips-in-flight", "1024", "--concurrency", "256"]
    for url in urls:
        args += ["--base-url", url]
    began = time.monotonic()  # the clock the stand-ins stamp requests with
    started, cpu = time.perf_counter(), time.process_time()
    with redirect_stderr(io.StringIO()) as err:
        code = run(args)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if code != 0:
        raise SystemExit(f"bench run failed: {err.getvalue()[-400:]}")
    summary = json.loads((out / "run.json").read_text())
    reports = [json.loads(p.read_text()) for p in (out / "reports").glob("*.json")]
    partial = sum("partial" in r["flags"] for r in reports)
    return summary["done"] / wall * 60, partial, began, cpu


def repeated(forge: Path, count: int, into: Path) -> Path:
    """A manifest of ``count`` clips: the forge's clips over and over, each under its own id."""
    rows = [json.loads(line) for line in (forge / "manifest.jsonl").read_text().splitlines()]
    lines = []
    for i in range(count):
        row = dict(rows[i % len(rows)])
        row["clip_id"] = f"{row['clip_id']}-{i}"
        row["video"] = str(forge / row["video"])
        lines.append(json.dumps(row))
    into.write_text("\n".join(lines) + "\n")
    return into


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--rate", type=float, default=8.0, help="requests/s a server serves")
    parser.add_argument("--clips-per-slot", type=float, default=3.0)
    parser.add_argument("--min-clips", type=int, default=48)
    parser.add_argument("--servers", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--kinds", nargs="+", choices=["queue", "429"], default=["queue", "429"])
    parser.add_argument(
        "--no-metrics",
        dest="metrics",
        action="store_false",
        help="queueing servers do not report their queue (no /metrics page)",
    )
    args = parser.parse_args(argv)
    print(
        f"8 s forge clips; each server serves at most {args.rate:g} requests/s "
        f"(slots / latency); {args.clips_per_slot:g} clips per slot, all in flight"
    )
    print(
        "| server | slots | servers | clips | requests/clip | most clips/min | whole run "
        "| steady clips/min | steady share busy | queued most | queued steady | refused "
        "| queue reads | partial clips | first request s | CPU ms/request |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        forge = Path(tmp) / "forge"
        forge_set(forge, count=24, seed=11)
        for kind in args.kinds:
            for slots in args.slots:
                for count in args.servers:
                    clips = max(args.min_clips, round(args.clips_per_slot * slots * count))
                    manifest = repeated(forge, clips, Path(tmp) / f"m{kind}{slots}{count}.jsonl")
                    latency = slots / args.rate
                    servers = [
                        Queueing(
                            slots,
                            latency,
                            refuse=kind == "429",
                            reports_queue=args.metrics,
                            answer=ANSWER,
                        )
                        for _ in range(count)
                    ]
                    with ExitStack() as stack:
                        urls = [
                            stack.enter_context(StandIn(responder=s, router=s.metrics)).url + "/v1"
                            for s in servers
                        ]
                        out = Path(tmp) / f"run-{kind}-{slots}-{count}"
                        rate, partial, began, cpu = bench_run(manifest, out, urls)
                    done = sum(len(s.served) for s in servers)
                    per_clip = done / clips
                    most = count * args.rate * 60 / per_clip
                    share = steady(servers)
                    refused = sum(s.refused for s in servers) / max(1, done)
                    reads = sum(s.queue_reads for s in servers) / max(1, done)
                    queued = max(s.settled_queue() for s in servers)
                    first = min(start for s in servers for start, _ in s.served) - began
                    print(
                        f"| {kind} | {slots} | {count} | {clips} | {per_clip:.1f} | {most:.1f} "
                        f"| {rate:.1f} ({rate / most:.2f}) | {share * most:.1f} | {share:.2f} "
                        f"| {max(s.most_waiting for s in servers)} "
                        f"| {queued} | {refused:.2f} | {reads:.2f} | {partial} | {first:.1f} "
                        f"| {cpu / max(1, done) * 1000:.1f} |",
                        flush=True,
                    )


if __name__ == "__main__":
    main(sys.argv[1:])
