"""``bench/graph_latency.py``'s floor row: a bare openai SDK command that makes the critical
path's calls one after the other against the stand-in server, the yardstick for what the whole
``gaze diagnose`` command adds."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.standin import Reply, StandIn

BENCH = Path(__file__).resolve().parents[2] / "bench" / "graph_latency.py"
DELAY_S = 0.05


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("graph_latency", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _recording(bench: Any) -> tuple[Callable[[Any], Reply], list[float]]:
    """The bench's replies after ``DELAY_S``, and the wall-clock time each request arrived (a
    command's own clock can be compared with it)."""
    served = bench.served(DELAY_S)
    arrivals: list[float] = []

    def respond(body: Any) -> Reply:
        arrivals.append(time.time())
        return served(body)

    return respond, arrivals


def test_the_floor_command_makes_the_five_calls_one_after_another():
    bench = _bench()
    respond, arrivals = _recording(bench)
    with StandIn(responder=respond) as server:
        bench.sdk_floor(server.url + "/v1")
    chats = [s for s in server.seen if s.path.endswith("/chat/completions")]
    assert len(chats) == bench.CRITICAL_PATH_CALLS == 5
    assert {s.body["response_format"]["json_schema"]["name"] for s in chats} == {"Floor"}
    # each call waits for the reply before it: none arrives within the delay of the one before
    assert all(b - a >= DELAY_S for a, b in zip(arrivals, arrivals[1:], strict=False))


@pytest.mark.parametrize(
    ("arrivals", "wall", "spent_ms"),
    [
        pytest.param(
            [
                (10.40, "Grounding"),
                (10.401, "Probe"),  # the start-up check, beside the first request: no stage
                (10.94, "WindowObservations"),  # 40 ms after the grounding reply
                (10.95, "WindowObservations"),
                (11.457, "RouterOutput"),
                (11.98, "Specialists_a"),  # one stage, whatever the dimensions
                (11.987, "Specialists_b"),
                (12.51, "CriticOutput"),
            ],
            3.03,
            [400, 50, 7, 30, 23, 20],
            id="five-stages-a-call-apart",
        ),
        pytest.param(
            [
                (10.40, "Grounding"),
                (10.94, "WindowObservations"),
                (11.30, "WindowObservations"),  # 360 ms later: its windows were still decoding
                (11.60, "WindowObservations"),  # what the router waited for
                (12.11, "RouterOutput"),
                (12.63, "Specialists_a"),
                (13.15, "CriticOutput"),
            ],
            3.70,
            [400, 700, 10, 20, 20, 50],
            id="observers-spread-out-are-one-stage",
        ),
        pytest.param(
            [(10.3 + 0.51 * k, "Floor") for k in range(5)],
            2.86,
            [300, 10, 10, 10, 10, 20],
            id="one-schema-splits-where-a-reply-came-between",
        ),
    ],
)
def test_hops_split_a_command_into_its_stages(
    arrivals: list[tuple[float, str]], wall: float, spent_ms: list[int]
) -> None:
    """A stage is the requests of one schema in a row, however spread out (a long clip's
    observers leave as their windows are decoded, some after gaps longer than half a call); a
    command whose requests all carry one schema (the floor's) has a stage per request that came
    after a reply."""
    spent = _bench().hops(arrivals, started=10.0, wall=wall, latency=0.5)
    assert [round(s * 1000) for s in spent] == spent_ms


def test_hops_of_a_command_that_sent_nothing_is_empty() -> None:
    assert _bench().hops([], started=0.0, wall=1.0, latency=0.5) == []


def test_the_router_stage_gives_the_cpu_read_at_its_last_request() -> None:
    arrivals = [
        (10.40, "Grounding", 0.6),
        (10.401, "Probe", 0.61),
        (10.94, "WindowObservations", 1.1),
        (10.95, "WindowObservations", 1.2),
        (11.46, "RouterOutput", 2.5),
        (11.45, "RouterOutput", 2.4),  # out of order: the later arrival counts
        (11.98, "Specialists_a", 2.6),
    ]
    at, cpu = _bench().cpu_by_router(arrivals, started=10.0, latency=0.5)
    assert (round(at, 3), cpu) == (1.46, 2.5)
    assert _bench().cpu_by_router(arrivals[:4], started=10.0, latency=0.5) is None
    unread = [(t, name, None) for t, name, _ in arrivals]
    assert _bench().cpu_by_router(unread, started=10.0, latency=0.5) is None


BURN_S = 0.2
GRANDCHILD = f"""
import time
while time.process_time() < {BURN_S}:
    pass
print("burnt", flush=True)
input()
"""
CHILD = f"""
import subprocess, sys
burner = subprocess.Popen([sys.executable, "-c", {GRANDCHILD!r}], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
print(burner.stdout.readline().strip(), flush=True)
input()
burner.communicate("")  # reaped: its CPU moves to this process's children's times
print("reaped", flush=True)
input()
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_command_s_cpu_counts_its_children_running_and_reaped() -> None:
    from bench.command_cpu import tree_cpu_s

    with subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as command:
        assert command.stdin is not None and command.stdout is not None
        assert command.stdout.readline().strip() == "burnt"
        running = tree_cpu_s(command.pid)
        command.stdin.write("\n")
        command.stdin.flush()
        assert command.stdout.readline().strip() == "reaped"
        reaped = tree_cpu_s(command.pid)
        command.stdin.write("\n")
        command.stdin.flush()
    assert running is not None and running >= BURN_S
    assert reaped is not None and reaped >= running
    assert tree_cpu_s(command.pid) is None  # gone


def test_the_floor_s_call_for_the_router_carries_the_cpu_its_command_had_used() -> None:
    bench = _bench()
    arrivals: list[tuple[float, str, float | None]] = []
    with StandIn(responder=bench.served(DELAY_S, arrivals, bench.RUNNING)) as server:
        bench.sdk_floor(server.url + "/v1")
    used = [cpu for _, _, cpu in arrivals]
    assert len(used) == bench.CRITICAL_PATH_CALLS
    # read at the floor's third call only: each reading takes CPU from the command
    assert [cpu is not None for cpu in used] == [i == bench.ROUTER_STAGE for i in range(len(used))]
    assert used[bench.ROUTER_STAGE] > 0  # the SDK's import alone takes CPU
    assert bench.cpu_by_router(arrivals, started=arrivals[0][0] - 1.0, latency=DELAY_S)
    assert bench.RUNNING.cpu_s() is None  # nothing runs now


class SlowReading:
    """A command's CPU that takes ``READ_S`` to read."""

    READ_S = 0.05

    def count_request(self) -> int:
        return 0

    def cpu_s(self) -> float:
        time.sleep(self.READ_S)
        return 1.0


def test_a_reply_leaves_its_latency_after_the_request_arrived_however_long_reading_took() -> None:
    bench = _bench()
    arrivals: list[tuple[float, str, float | None]] = []
    respond = bench.served(0.3, arrivals, SlowReading())
    schema = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    body = {
        "messages": [{"role": "user", "content": "route"}],
        "response_format": {"json_schema": {"name": "RouterOutput", "schema": schema}},
    }
    reply = respond(body)
    assert arrivals[0][1:] == ("RouterOutput", 1.0)
    assert 0.0 < reply.delay_s <= 0.3 - SlowReading.READ_S
    body["response_format"]["json_schema"]["name"] = "CriticOutput"  # not read: no wait
    assert respond(body).delay_s > 0.3 - SlowReading.READ_S and arrivals[1][2] is None


def test_the_bench_reads_the_cpu_at_a_router_s_request_or_the_floor_s_third() -> None:
    reads = _bench().reads_cpu
    assert reads("RouterOutput", 7) and reads("Floor", 2)
    assert not reads("Floor", 1) and not reads("Floor", 3) and not reads("Grounding", 2)


def test_a_median_comes_with_the_interval_its_rounds_allow():
    median_interval = _bench().median_interval
    rounds = [0.31, -0.12, 0.18, 0.05, 0.44, 0.21, -0.02, 0.27, 0.09, 0.16]
    middle, low, high = median_interval(rounds)
    assert middle == pytest.approx(0.17)  # the two middle rounds' mean, as statistics.median
    assert low < middle < high and min(rounds) <= low and high <= max(rounds)
    assert median_interval(rounds) == (middle, low, high)  # seeded: the same rounds, the same
    # a shift far beyond the rounds' spread is settled; no spread at all leaves no doubt
    assert median_interval([r + 1.0 for r in rounds])[1] > 0.5
    assert median_interval([0.2] * 5) == pytest.approx((0.2, 0.2, 0.2))
    # more rounds of the same spread narrow the interval
    assert median_interval(rounds * 4)[2] - median_interval(rounds * 4)[1] < high - low
    with pytest.raises(ValueError, match="no rounds"):
        median_interval([])


def test_real_videos_are_timed_under_their_names_and_forged_clips_under_their_lengths(
    tmp_path: Path,
):
    from types import SimpleNamespace

    bench = _bench()
    video = tmp_path / "drawer_1080p.mp4"
    video.write_bytes(b"")  # named, not read: the bench times whatever gaze makes of it
    given = bench.clips_to_time(SimpleNamespace(clips=[video], durations=[8]), tmp_path)
    assert given == [(video, "drawer_1080p.mp4")]
    forged = bench.clips_to_time(SimpleNamespace(clips=None, durations=[1.5]), tmp_path)
    assert [label for _, label in forged] == ["1.5s"] and forged[0][0].stat().st_size > 0
    with pytest.raises(SystemExit, match="no such video"):
        bench.clips_to_time(SimpleNamespace(clips=[tmp_path / "gone.mp4"], durations=[]), tmp_path)


def test_the_decoding_floor_decodes_every_frame_before_its_second_call(tmp_path: Path):
    from bench.floors import floor_argv
    from gaze.bench.forge import forge_clip
    from gaze.video.reader import VideoReader

    bench = _bench()
    clip = tmp_path / "c.mp4"
    forge_clip(clip, seed=3, failures=[])
    respond, arrivals = _recording(bench)
    with StandIn(responder=respond) as server:
        url = server.url + "/v1"
        argv = floor_argv(url, bench.CRITICAL_PATH_CALLS, "put the block on the plate", clip)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
        frames, decoded_at = done.stdout.split()
        with VideoReader(clip) as reader:
            assert int(frames) == sum(1 for _ in reader.pictures()) > 0  # every frame
        assert len(arrivals) == bench.CRITICAL_PATH_CALLS
        assert arrivals[0] < arrivals[1] and float(decoded_at) <= arrivals[1]
        assert bench.sdk_floor(url, clip) > 0
        arrivals.clear()
        gone = subprocess.run(
            floor_argv(url, 5, "x", tmp_path / "gone.mp4"), capture_output=True, text=True
        )
        assert gone.returncode == 2 and "cannot decode" in gone.stderr
        assert len(arrivals) <= 1  # never a second call without the decoding
