"""README "Pointing gaze at a model": retries, back-pressure and deadlines against stand-in
servers that behave like hosted APIs under load (the real openai SDK, a child process)."""

from __future__ import annotations

import json

import pytest

from gaze.schema.report import Report
from tests.promises.conftest import gaze_cli
from tests.standin import (
    Queueing,
    RateLimited,
    StandIn,
    clip_work,
    dies_after,
    each_new_request_fails_once,
    minimal_chat,
    slow_replies,
)


def diagnose_on(clip, url: str, *extra: str) -> list[str]:
    path, row = clip
    return [
        "diagnose", str(path), "-i", row.instruction, "--model", "openai:m",
        "--base-url", url, "--json", *extra,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("status", "retry_after"), [(429, "0.2"), (429, None), (503, None), (500, None)]
)
def test_a_server_failing_every_new_request_once_still_gives_a_whole_report(
    long_clip, tmp_path, status, retry_after
):
    """At the default concurrency, dozens of first attempts fail at once: that is load, not an
    endpoint that is down (the breaker used to count them as consecutive and end the clip)."""
    with StandIn(responder=each_new_request_fails_once(status, retry_after)) as server:
        proc = gaze_cli(
            *diagnose_on(long_clip, server.url + "/v1"),
            env={"GAZE_CACHE_DIR": str(tmp_path / "cache")},
        )
        work = clip_work(server.seen)
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    assert "partial" not in report.flags and "parse_failed" not in report.flags
    assert report.manifest.failed_requests * 2 == len(work)  # each request failed exactly once
    assert report.manifest.calls["observer"] == 2 * 2  # six windows as 4 + 2, each retried once


def test_a_rate_limited_server_gets_fewer_requests_at_once_instead_of_failing_the_clip(
    long_clip, tmp_path
):
    """A server that takes 2 requests at once and answers the rest 429 with Retry-After: gaze
    slows down to what it takes (README: a 429 is back-pressure) and the clip completes. (The
    clip is cut into three segments of two windows, whose specialist calls go at once.)"""
    limit = RateLimited(capacity=2, latency_s=0.3, retry_after_s=0.3)
    with StandIn(responder=limit) as server:
        proc = gaze_cli(
            *diagnose_on(long_clip, server.url + "/v1", "--max-retries", "1"),
            *("--max-segment-windows", "2", "--max-frames-per-call", "32"),
            env={"GAZE_CACHE_DIR": str(tmp_path / "cache")},
        )
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    assert "partial" not in report.flags
    assert limit.refused > 0 and limit.max_in_flight <= 2
    # with one retry per call, the clip completes only because 429s do not spend the budget
    assert report.manifest.failed_requests == limit.refused


def test_a_slow_reply_is_kept_within_the_deadline_and_cut_past_it(long_clip, tmp_path):
    """--request-timeout is the deadline, both ways: 2.5 s lets a 1.5 s reply through; 1 s
    fails the clip, naming the deadline."""
    with StandIn(responder=slow_replies(1.5)) as server:
        slow_ok = gaze_cli(
            *diagnose_on(long_clip, server.url + "/v1", "--request-timeout", "2.5"),
            env={"GAZE_CACHE_DIR": str(tmp_path / "a")},
        )
        too_slow = gaze_cli(
            *diagnose_on(
                long_clip, server.url + "/v1", "--request-timeout", "1", "--max-retries", "0"
            ),
            env={"GAZE_CACHE_DIR": str(tmp_path / "b")},
        )
    assert slow_ok.returncode == 0, slow_ok.stderr
    assert too_slow.returncode == 1 and "within 1 s" in too_slow.stderr


def test_a_request_timeout_over_two_minutes_is_the_sdk_clients_own(long_clip, tmp_path):
    """``--request-timeout 300`` reaches the openai client itself: the SDK puts its deadline on
    every request (``x-stainless-read-timeout``), and its own default of 120 s used to cut a
    130 s reply short whatever the run's deadline was."""
    with StandIn(responder=minimal_chat) as server:
        proc = gaze_cli(
            *diagnose_on(long_clip, server.url + "/v1", "--request-timeout", "300"),
            env={"GAZE_CACHE_DIR": str(tmp_path / "cache")},
        )
        seen = server.seen
    assert proc.returncode == 0, proc.stderr
    posts = [s for s in seen if s.method == "POST"]
    assert posts and {s.headers.get("x-stainless-read-timeout") for s in posts} == {"300.0"}


def test_one_endpoint_of_a_pool_dying_mid_run_loses_nothing(long_clip, tmp_path):
    holder: dict[str, StandIn] = {}
    with (
        StandIn(responder=dies_after(4, lambda: holder["dying"])) as dying,
        StandIn(responder=minimal_chat) as alive,
    ):
        holder["dying"] = dying
        proc = gaze_cli(
            *diagnose_on(long_clip, dying.url + "/v1", "--base-url", alive.url + "/v1"),
            env={"GAZE_CACHE_DIR": str(tmp_path / "cache")},
        )
        served_alive = len(clip_work(alive.seen))
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    assert "partial" not in report.flags
    assert served_alive > 0 and report.manifest.calls["observer"] >= 2  # six windows: four and two


def test_a_run_of_many_clips_keeps_a_short_queue_at_a_server_that_reports_it(forge_dir, tmp_path):
    """A server that queues past its 4 slots (vLLM past ``max_num_seqs``) refuses nothing; it
    reports its queue (``/metrics``) and gaze keeps that queue short. Without the report the
    queue takes what the concurrency allows: here a quarter of the requests mid-run met a queue
    of 18 or more (24 clips, 4 slots of 0.2 s). Nothing is lost."""
    rows = [json.loads(line) for line in (forge_dir / "manifest.jsonl").read_text().splitlines()]
    manifest = tmp_path / "thrice.jsonl"
    thrice = [
        {**row, "clip_id": f"{row['clip_id']}-{k}", "video": str(forge_dir / row["video"])}
        for k in range(3)
        for row in rows
    ]
    manifest.write_text("".join(json.dumps(row) + "\n" for row in thrice))
    server_queue = Queueing(4, latency_s=0.2)
    with StandIn(responder=server_queue, router=server_queue.metrics) as server:
        proc = gaze_cli(
            "bench", "run", str(manifest), "--out", str(tmp_path / "run"),
            "--model", "openai:m", "--base-url", server.url + "/v1", "--no-cache",
            "--clips-in-flight", "64", "--concurrency", "64",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "run" / "run.json").read_text())
    assert summary["done"] == 3 * len(rows)
    settled = server_queue.settled_queue()  # one in 4 of 4 served: a margin of 1, and a read
    assert settled <= 4, (settled, server_queue.queue_at_arrival)  # every 0.5 s lags a little


def test_a_run_of_many_clips_keeps_a_rate_limited_server_full_without_flooding_it(
    forge_dir, tmp_path
):
    """Every clip of the forge set in flight against a server that takes 4 requests at once
    and refuses the rest: the limit starts at 8 and falls to what the server holds, so few
    requests are refused (halving once per round from the concurrency refused about 3 for
    every 4 served) and nothing is lost."""
    limit = RateLimited(capacity=4, latency_s=0.2, retry_after_s=0.2)
    with StandIn(responder=limit) as server:
        proc = gaze_cli(
            "bench", "run", str(forge_dir / "manifest.jsonl"), "--out", str(tmp_path / "run"),
            "--model", "openai:m", "--base-url", server.url + "/v1", "--no-cache",
            "--clips-in-flight", "64", "--concurrency", "64",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "run" / "run.json").read_text())
    assert summary["done"] == len((forge_dir / "manifest.jsonl").read_text().splitlines())
    assert limit.max_in_flight <= 4 and limit.served >= 5 * summary["done"]
    assert limit.refused <= 0.3 * limit.served, (limit.refused, limit.served)
