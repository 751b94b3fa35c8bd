"""How close a diagnosis gets to its critical path, with a backbone of fixed latency.

    python bench/graph_latency.py [--latency 0.5] [--concurrency 32] [--durations 8 30 60]
                                  [--via inprocess http cli] [--repeat 3] [--against DIR]
                                  [--hops] [--clips VIDEO ...]

Every call takes ``latency`` seconds and is answered with small valid outputs (each specialist
proposes one hypothesis so the critic runs too). The critical path is five calls (grounding ->
observe -> router -> specialist -> critic) whatever the clip length; the figure of merit is
wall / (critical-path calls x latency), target <= 1.3. The routes:

- ``inprocess``: ``gaze.adiagnose`` with the scripted backbone (the graph alone);
- ``http``: ``gaze.adiagnose`` with the real openai SDK and a stand-in server on 127.0.0.1 that
  waits ``latency`` before each answer (start-up check included);
- ``cli``: the whole ``gaze diagnose`` command as a new process against that server
  (interpreter start, imports, start-up check, report writing included);
- ``floor``: the least any Python command using the openai SDK can do against the same server:
  a new process that imports the SDK, builds its client, makes the five calls one after the
  other with a one-line prompt, and ends without the interpreter's teardown (as ``gaze`` does).
  ``cli`` over ``floor`` is what gaze itself adds to a whole command;
- ``decoding``: that floor with the clip decoded in full (PyAV, no conversion) beside its first
  call, and its second call made once the decoding is done too (``bench.floors``): the least a
  command that looks at every frame before its second stage can do. Where a large clip's
  decoding outlasts the first call, this floor is the machine's limit, and ``cli`` over it is
  what gaze adds to FFmpeg's own work.

The clips are forged (320x240, 10 fps, one per ``--durations``) unless ``--clips`` names real
videos, whose rows carry their file names: a change that helps the small forged clip can cost
a 720p or 1080p one more (FFmpeg decoding in one thread did).

Each figure is the median of ``--repeat`` rounds (the spread is printed beside it): single runs
on a shared 2-core machine vary by 0.1-0.3 s, and the machine's load drifts over minutes, so
every round runs each route once, one after the other, and each whole command's margin over the
floor is the median of its per-round differences, with the 95% bootstrap interval of that
median (``median_interval``). ``--against DIR`` also times the whole command of another
checkout of gaze (``git worktree add DIR REV``; compile it first with ``python -m compileall
DIR/gaze``, or every run pays for compiling it), run by run beside this one, so that the
machine's load falls on both alike, and prints this command minus that one, the median of the
paired rounds with its interval: an interval across zero has not told the two apart.
``--hops`` prints where each whole command's time goes: its first request after the process
started, each stage's last request after the last reply before it (the floor's calls take 5-8
ms each), and its end after the last reply; and the CPU the command and its child processes
had used by its router's request (the floor's third), with its share of all the cores' seconds
up to then: a command that needs every core before its router can go waits for CPU, not for
replies. The stand-in reads that CPU (2-10 ms of the same
cores) at the router's request and the floor's third only, and every reply leaves ``latency``
after its request arrived, whatever the stand-in's own work took: a stage of four requests
would otherwise wait for four readings and the floor's for one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.standin, the stand-in

import numpy as np  # noqa: E402

from bench.command_cpu import RunningCommand  # noqa: E402
from bench.floors import FLOOR_SCHEMA, floor_argv  # noqa: E402
from gaze.api import adiagnose  # noqa: E402
from gaze.bench.forge import forge_clip  # noqa: E402
from gaze.metrics.bootstrap import percentile_interval  # noqa: E402
from gaze.models.protocol import ModelRequest, TextPart  # noqa: E402
from gaze.models.scripted import ScriptedBackbone, minimal_instance  # noqa: E402
from gaze.settings.context import GazeContext  # noqa: E402
from tests.standin import Reply, StandIn, chat_reply  # noqa: E402

CRITICAL_PATH_CALLS = 5
ROUTES = ("inprocess", "http", "cli", "floor", "decoding")
ROUTER_STAGE = 2
"""The router's stage among a command's stages (grounding, observers, router, ...); the floor's
third call stands for it."""
RUNNING = RunningCommand()
"""The whole command (or floor) being timed, whose CPU ``--hops`` reads as requests arrive."""
Arrival = tuple[float, str, float | None]
"""When a request arrived, its schema's name, and the CPU seconds its command had used by then
(None when not read)."""
INSTRUCTION = "put the block on the plate"
RESAMPLES = 2000
"""Resamples of the rounds behind each median's interval (``median_interval``)."""


def answer(schema_name: str, schema: dict[str, Any], text: str) -> dict[str, Any]:
    """The bench's reply to one call: one hypothesis per dimension a specialist call covers,
    the critic accepts them all."""
    if schema_name.startswith("Specialists_"):
        span = re.search(r"Segment: seg\d+ \(([\d.]+)-([\d.]+) s", text)
        start = float(span[1]) if span else 0.0
        return {
            kind.removeprefix("Hypothesis_"): {
                "hypotheses": [
                    {
                        "type": part["properties"]["type"]["enum"][0],
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
            for kind, part in schema["$defs"].items()
            if kind.startswith("Hypothesis_")
        }
    if schema_name == "CriticOutput":
        count = len(re.findall(r"^\[\d+\]", text, re.MULTILINE))
        verdicts = [
            {"index": i, "decision": "accept", "reason": "bench", "confidence": 0.9}
            for i in range(count)
        ]
        return {"verdicts": verdicts}
    return minimal_instance(schema)


def scripted(request: ModelRequest) -> Any:
    text = "\n".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))
    assert request.json_schema is not None
    return answer(request.schema_name, request.json_schema, text)


def served(
    latency: float, arrivals: list[Arrival] | None = None, cpu: RunningCommand | None = None
) -> Any:
    """The stand-in's answers, each ``latency`` after its request arrived; ``arrivals`` (when
    given) gets each request's arrival time, schema name and, with ``cpu``, the CPU its command
    had used by then, read at the requests ``reads_cpu`` names only: a reading takes 2-10 ms of
    the cores the command runs on."""

    def respond(body: Any) -> Reply:
        arrived = time.perf_counter()
        if not isinstance(body, dict) or "response_format" not in body:  # GET /v1/models
            return Reply(200, {"object": "list", "data": []}, delay_s=latency)
        spec = body["response_format"]["json_schema"]
        if arrivals is not None:
            nth = cpu.count_request() if cpu is not None else 0
            used = cpu.cpu_s() if cpu is not None and reads_cpu(spec["name"], nth) else None
            arrivals.append((arrived, spec["name"], used))
        texts = []
        for message in body["messages"]:
            content = message["content"]
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
            texts += [part["text"] for part in parts if part["type"] == "text"]
        text = "\n".join(texts)
        reply = chat_reply(json.dumps(answer(spec["name"], spec["schema"], text)))
        # the latency runs from the arrival: the bench's own work here (the reading above, the
        # answer) would otherwise delay a stage of several requests more than the floor's one
        reply.delay_s = max(0.0, latency - (time.perf_counter() - arrived))
        return reply

    return respond


def reads_cpu(schema_name: str, nth: int) -> bool:
    """Whether the bench reads a command's CPU at this request (``--hops``): a router's, or the
    floor's call that stands for it (its ``ROUTER_STAGE``-th, counted from 0)."""
    return schema_name == "RouterOutput" or (schema_name == FLOOR_SCHEMA and nth == ROUTER_STAGE)


async def in_process(clip: Path, latency: float, concurrency: int) -> tuple[float, int]:
    backbone = ScriptedBackbone(scripted, model="bench", latency_s=latency)
    context = GazeContext(use_cache=False, concurrency=concurrency)
    started = time.perf_counter()
    await adiagnose(clip, INSTRUCTION, backbones={"default": backbone}, context=context)
    return time.perf_counter() - started, len(backbone.requests)


async def over_http(clip: Path, url: str, concurrency: int) -> float:
    context = GazeContext(
        model="openai:bench", base_url=url, use_cache=False, concurrency=concurrency
    )
    started = time.perf_counter()
    await adiagnose(clip, INSTRUCTION, context=context)
    return time.perf_counter() - started


def whole_command(
    clip: Path, url: str, concurrency: int, out: Path, checkout: Path | None = None
) -> float:
    argv = [sys.executable, "-m", "gaze", "diagnose", str(clip), "-i", INSTRUCTION]
    argv += ["--model", "openai:bench", "--base-url", url, "--no-cache"]
    argv += ["--concurrency", str(concurrency), "--out", str(out)]
    env = dict(os.environ)
    if checkout is not None:  # that checkout's gaze first (and not the one in the cwd)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(checkout), env.get("PYTHONPATH")]))
    started = time.perf_counter()
    done = timed_run(argv, env=env, cwd=out.parent)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"gaze diagnose failed: {done.stderr.strip()[-400:]}")
    return wall


def timed_run(argv: list[str], **popen: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run`` with the process known to ``RUNNING`` while it runs."""
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen
    ) as process:
        RUNNING.started(process.pid)
        try:
            out, err = process.communicate()
        finally:
            RUNNING.ended()
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def sdk_floor(url: str, clip: Path | None = None) -> float:
    """Wall seconds of the least command that makes the critical path's calls with the SDK
    (``bench.floors``), decoding ``clip`` in full before its second call when given one."""
    argv = floor_argv(url, CRITICAL_PATH_CALLS, INSTRUCTION, clip)
    started = time.perf_counter()
    done = timed_run(argv)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        what = "decoding floor" if clip is not None else "SDK floor"
        raise SystemExit(f"the {what} script failed: {done.stderr.strip()[-400:]}")
    return wall


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32])
    parser.add_argument("--durations", type=float, nargs="+", default=[8, 30, 60])
    parser.add_argument(
        "--clips",
        type=Path,
        nargs="+",
        help="videos to time instead of forged clips (--durations is then unused): the forged "
        "clips are 320x240, and a change that helps them can cost a 1080p clip more",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median)")
    parser.add_argument("--against", type=Path, help="another checkout's whole command, beside")
    parser.add_argument(
        "--hops", action="store_true", help="where each whole command's time goes (ms, medians)"
    )
    parser.add_argument(
        "--via",
        nargs="+",
        choices=ROUTES,
        default=list(ROUTES),
    )
    args = parser.parse_args(argv)
    ideal = CRITICAL_PATH_CALLS * args.latency
    arrivals: list[Arrival] = []
    responder = served(args.latency, arrivals, RUNNING if args.hops else None)
    with tempfile.TemporaryDirectory() as tmp, StandIn(responder=responder) as server:
        url = server.url + "/v1"
        warm = Path(tmp) / "warm.mp4"  # pay in-process imports and first-use costs untimed
        forge_clip(warm, seed=2, failures=[])
        asyncio.run(in_process(warm, 0.0, 4))
        asyncio.run(over_http(warm, url, 4))  # imports the SDK, as a long-lived pipeline has
        print(
            f"backbone latency {args.latency:g} s per call; critical path "
            f"{CRITICAL_PATH_CALLS} calls = {ideal:g} s"
        )
        print(
            f"{'route':>9s} {'clip':>6s} {'conc':>5s} {'calls':>6s} {'wall s':>7s} "
            f"{'wall/ideal':>11s} {'runs (min-max)':>15s}"
        )
        for clip, label in clips_to_time(args, Path(tmp)):
            for concurrency in args.concurrency:
                measure(clip, label, concurrency, url, server, args, tmp, ideal, arrivals)


def clips_to_time(args: Any, folder: Path) -> list[tuple[Path, str]]:
    """(video, its label in the rows): the ``--clips`` given, each named by its file, or one
    forged clip per ``--durations``, named by its length."""
    if args.clips:
        for video in args.clips:
            if not video.is_file():
                raise SystemExit(f"graph_latency.py: no such video: {video}")
        return [(video, video.name) for video in args.clips]
    forged = []
    for duration in args.durations:
        clip = folder / f"clip_{duration:g}s.mp4"
        forge_clip(clip, seed=1, failures=[], duration_s=duration)
        forged.append((clip, f"{duration:g}s"))
    return forged


def measure(
    clip: Path,
    label: str,
    concurrency: int,
    url: str,
    server: StandIn,
    args: Any,
    tmp: str,
    ideal: float,
    arrivals: list[Arrival],
) -> None:
    """Print each route's median over ``--repeat`` rounds, every round running every route one
    after the other, and each whole command's margin over the floor, the median of its
    per-round differences: the machine's load, which drifts over minutes, falls on both."""
    rows: dict[str, tuple[str, Path | None]] = {}
    for via in args.via:
        rows[via] = (via, None)
        if via == "cli" and args.against is not None:
            rows[f"cli@{args.against.name}"] = ("cli", args.against)
    walls: dict[str, list[float]] = {row: [] for row in rows}
    spent: dict[str, list[list[float]]] = {row: [] for row in rows}
    busy: dict[str, list[tuple[float, float]]] = {row: [] for row in rows}
    calls: dict[str, int] = {}
    for _ in range(max(1, args.repeat)):
        for row, (via, checkout) in rows.items():
            seen, started = len(arrivals), time.perf_counter()
            wall, calls[row] = run_once(via, clip, url, concurrency, server, args, tmp, checkout)
            walls[row].append(wall)
            spent[row].append(hops(arrivals[seen:], started, wall, args.latency))
            if (at_router := cpu_by_router(arrivals[seen:], started, args.latency)) is not None:
                busy[row].append(at_router)
    for row, runs in walls.items():
        wall = statistics.median(runs)
        print(
            f"{row:>9s} {label:>6s} {concurrency:>5d} {calls[row]:>6d} "
            f"{wall:>7.2f} {wall / ideal:>11.2f} {min(runs):>7.2f}-{max(runs):.2f}",
            flush=True,
        )
    margins = [(r, floor) for floor in ("floor", "decoding") if floor in rows for r in rows]
    for row, floor in margins:
        if not (row.startswith("cli") or (row, floor) == ("decoding", "floor")):
            continue
        over = [a - b for a, b in zip(walls[row], walls[floor], strict=True)]
        middle, low, high = median_interval(over)
        name = "the floor" if floor == "floor" else "the decoding floor"
        print(
            f"{row:>9s} {label:>6s} over {name}, median of {len(over)} rounds: "
            f"{middle:+.2f} s (95% interval of the median {low:+.2f} to {high:+.2f}; "
            f"rounds {min(over):+.2f} to {max(over):+.2f})",
            flush=True,
        )
    for row in (r for r in rows if r.startswith("cli@")):
        paired = [a - b for a, b in zip(walls["cli"], walls[row], strict=True)]
        middle, low, high = median_interval(paired)
        print(
            f"{'cli':>9s} {label:>6s} minus {row}, median of {len(paired)} paired rounds: "
            f"{middle:+.2f} s (95% interval of the median {low:+.2f} to {high:+.2f})",
            flush=True,
        )
    for row in (r for r in rows if args.hops and rows[r][0] in ("cli", "floor", "decoding")):
        if len({len(h) for h in spent[row]}) != 1:
            continue  # a round whose stages did not come apart: no per-stage median
        medians = [
            statistics.median(h[k] for h in spent[row]) * 1000 for k in range(len(spent[row][0]))
        ]
        gaps = " ".join(f"+{m:.0f}" for m in medians[1:-1])
        print(
            f"{row:>9s} {label:>6s} ms: first request {medians[0]:.0f}, each stage's "
            f"last request after the last reply before it {gaps}, end +{medians[-1]:.0f}",
            flush=True,
        )
        if busy[row]:
            cores = os.cpu_count() or 1
            elapsed = statistics.median(at for at, _ in busy[row])
            cpu = statistics.median(used for _, used in busy[row])
            share = statistics.median(used / (cores * at) for at, used in busy[row])
            print(
                f"{row:>9s} {label:>6s} CPU by the router's request (the floor's third): "
                f"{cpu:.2f} s in its first {elapsed:.2f} s, {share:.0%} of {cores} cores "
                "(the command and its child processes)",
                flush=True,
            )


def median_interval(
    values: Sequence[float], resamples: int = RESAMPLES, seed: int = 0
) -> tuple[float, float, float]:
    """(median, low, high): the median of ``values`` and the 95% percentile interval of the
    medians of ``resamples`` resamples of them, drawn with replacement by a seeded generator
    (the same rounds give the same interval). On a shared 2-core machine one round's margin
    swings by 0.3 s either way: the interval says whether the rounds settled a difference of a
    tenth of a second, which the median alone does not."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("no rounds to take a median of")
    draws = np.random.default_rng(seed).integers(0, data.size, size=(resamples, data.size))
    low, high = percentile_interval(np.median(data[draws], axis=1)[:, None])[0]
    return float(np.median(data)), float(low), float(high)


def stages_of(arrivals: Sequence[tuple[Any, ...]], latency: float) -> list[list[Arrival]]:
    """One command's requests (``Arrival``; the CPU may be left out) in the stages of its
    critical path, in time order. A stage is the requests of one schema in a row
    (``Specialists_*`` is one), however spread out (a long clip's observers leave as decoding
    hands their windows over); a command whose requests all carry one schema (the floor's) has
    a stage per request that came after a reply (``latency`` later). The start-up check
    (``Probe``) goes beside the first request and is in no stage."""
    kinds = sorted((a[0], a[1].split("_")[0], a[2] if len(a) > 2 else None) for a in arrivals)
    kinds = [a for a in kinds if a[1] != "Probe"]
    by_schema = len({kind for _, kind, _ in kinds}) > 1
    stages: list[list[Arrival]] = []
    for here, arrival in enumerate(kinds):
        before = kinds[here - 1] if here else None
        t, kind = arrival[0], arrival[1]
        if before is None or (kind != before[1] if by_schema else t - before[0] > latency / 2):
            stages.append([])
        stages[-1].append(arrival)
    return stages


def cpu_by_router(
    arrivals: Sequence[tuple[Any, ...]], started: float, latency: float
) -> tuple[float, float] | None:
    """(seconds after the command started, CPU seconds it had used) when the last request of
    its router's stage arrived; None without that stage or without a CPU reading there."""
    stages = stages_of(arrivals, latency)
    if len(stages) <= ROUTER_STAGE:
        return None
    arrived, _, cpu = stages[ROUTER_STAGE][-1]
    return None if cpu is None else (arrived - started, cpu)


def hops(
    arrivals: Sequence[tuple[Any, ...]], started: float, wall: float, latency: float
) -> list[float]:
    """Where one command's time went, from the stand-in's arrival times (seconds): its first
    request after the process started, then for each stage of the critical path
    (``stages_of``) the time its last request arrived after the last reply of the stage before
    it left the server, then the time from the last reply to the process's end."""
    stages = [[a[0] for a in stage] for stage in stages_of(arrivals, latency)]
    if not stages:
        return []
    lasts = [stage[-1] for stage in stages]
    between = [b - a - latency for a, b in zip(lasts, lasts[1:], strict=False)]
    return [stages[0][0] - started, *between, started + wall - lasts[-1] - latency]


def run_once(
    via: str,
    clip: Path,
    url: str,
    concurrency: int,
    server: StandIn,
    args: Any,
    tmp: str,
    checkout: Path | None = None,
) -> tuple[float, int]:
    """(wall seconds, calls the backbone or the server saw) of one diagnosis."""
    if via == "inprocess":
        return asyncio.run(in_process(clip, args.latency, concurrency))
    before = len(server.seen)
    if via == "http":
        wall = asyncio.run(over_http(clip, url, concurrency))
    elif via == "floor":
        wall = sdk_floor(url)
    elif via == "decoding":
        wall = sdk_floor(url, clip)
    else:
        wall = whole_command(clip, url, concurrency, Path(tmp) / "r.json", checkout)
    return wall, len(server.seen) - before


if __name__ == "__main__":
    main(sys.argv[1:])
