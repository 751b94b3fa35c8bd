"""README "Batch pricing": `gaze bench run --batch-api` against stand-in batch APIs (the real
openai and google-genai SDKs, the CLI as a child process, a round per invocation as a user
runs it): the same reports as a live run, each request billed once at half the price, failed
and expired lines sent again, a job a crash left unrecorded found rather than paid twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gaze.schema.report import Report
from tests.batch_standin import BatchAPI, minimal_gemini
from tests.promises.conftest import gaze_cli
from tests.standin import StandIn, error_reply, minimal_chat

KEY = "sk-planted-batch-key-0123456789"
FOUR = (
    "--only",
    "*clean",
    "--only",
    "*teleportation",
    "--only",
    "*hallucination",
    "--only",
    "*blur",
)
"""Four forge clips: one clean, three with failures the pixel pass finds."""
PRICES = {"models": {"openai:m": {"input": 2.5, "output": 10.0}}}


def _env(tmp_path: Path, provider: str = "openai") -> dict[str, str]:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    key = "OPENAI_API_KEY" if provider == "openai" else "GEMINI_API_KEY"
    return {key: KEY, "GAZE_CACHE_DIR": str(tmp_path / "cache"), "GAZE_PRICES": str(prices)}


def _run(manifest: Path, out: Path, url: str, env: dict[str, str], *extra: str, model="openai:m"):
    return gaze_cli(
        "bench", "run", str(manifest), "--out", str(out), "--model", model,
        "--base-url", url, *extra, env=env,
    )  # fmt: skip


def _polled(manifest: Path, out: Path, url: str, env: dict[str, str], *extra: str, **kw: Any):
    """Every round in one command (``--batch-poll-s``), until no clip waits."""
    proc = _run(manifest, out, url, env, "--batch-api", "--batch-poll-s", "0.01", *extra, **kw)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert not json.loads((out / "run.json").read_text()).get("waiting"), proc.stderr
    return proc


def _reports(out: Path) -> dict[str, Report]:
    return {
        p.stem: Report.model_validate_json(p.read_text())
        for p in sorted((out / "reports").glob("*.json"))
    }


def _findings(report: Report) -> Any:
    return (
        [(e.type, e.start_s, e.end_s, e.severity, e.confidence) for e in report.events],
        report.flags,
        report.assessment.not_assessed,
    )


def test_a_batch_run_gives_a_live_runs_reports_at_half_the_price(forge_dir, tmp_path):
    manifest = forge_dir / "manifest.jsonl"
    env = _env(tmp_path)
    with StandIn(responder=minimal_chat) as live:
        proc = _run(manifest, tmp_path / "live", live.url + "/v1", env, "--no-cache", *FOUR)
    assert proc.returncode == 0, proc.stderr
    api = BatchAPI(polls_to_finish=0)
    with StandIn(router=api) as server:  # a round, then the rest in one command
        procs = [_run(manifest, tmp_path / "batch", server.url + "/v1", env, "--batch-api", *FOUR)]
        procs.append(_polled(manifest, tmp_path / "batch", server.url + "/v1", env, *FOUR))
    assert all(p.returncode == 0 for p in procs), procs[-1].stderr
    live_reports, batch_reports = _reports(tmp_path / "live"), _reports(tmp_path / "batch")
    assert set(batch_reports) == set(live_reports) and len(live_reports) == 4
    for clip_id, live_report in live_reports.items():
        batch_report = batch_reports[clip_id]
        assert _findings(batch_report) == _findings(live_report), clip_id
        assert batch_report.manifest.calls == live_report.manifest.calls
        live_cost = live_report.manifest.cost_usd
        assert live_cost > 0 and batch_report.manifest.cost_usd == pytest.approx(
            live_cost / 2, abs=1e-6
        )
    # stage by stage: a job per round (a round that only polls submits nothing), each request
    # in exactly one line, and the rounds said so
    assert (
        len(api.answered)
        == len(set(api.answered))
        == sum(sum(r.manifest.calls.values()) for r in batch_reports.values())
    )
    assert "clips wait for batch replies: run the same command again" in procs[0].stderr
    assert "0 clips waiting" in procs[-1].stderr and "batch round 1;" in procs[0].stderr
    run = json.loads((tmp_path / "batch" / "run.json").read_text())
    assert run["done"] + run["resumed"] == 4 and "waiting" not in run
    assert run["executor"]["batch_api"]["running_jobs"] == 0
    for proc in procs:
        assert KEY not in proc.stdout + proc.stderr
    for path in (tmp_path / "batch").rglob("*"):
        assert path.is_dir() or KEY.encode() not in path.read_bytes(), path


def test_live_roles_take_clips_through_in_fewer_rounds_billed_at_what_each_call_cost(
    forge_dir, tmp_path
):
    """``--batch-live grounding --batch-live router``: those calls go out live, once per clip
    over all rounds (no response cache: the batch store keeps them), billed in full; the rest
    at half. The reports are a live run's, in two rounds fewer than every call batched."""
    manifest, env = forge_dir / "manifest.jsonl", _env(tmp_path)
    with StandIn(responder=minimal_chat) as live:
        proc = _run(manifest, tmp_path / "live", live.url + "/v1", env, "--no-cache", *FOUR)
    assert proc.returncode == 0, proc.stderr
    rounds, live_schemas = {}, []
    for name, extra in [
        ("batch", ()),
        ("mixed", ("--batch-live", "grounding", "--batch-live", "router")),
    ]:
        api = BatchAPI(polls_to_finish=0)
        with StandIn(router=api) as server:
            proc = _polled(
                manifest, tmp_path / name, server.url + "/v1", env, "--no-cache", *extra, *FOUR
            )
            # a later round with another choice would bill calls at the wrong rate: refused
            again = _run(
                manifest, tmp_path / name, server.url + "/v1", env, "--no-cache", "--batch-api",
                *("--batch-live", "critic"), *FOUR,
            )  # fmt: skip
            assert again.returncode == 2 and "--batch-live" in again.stderr, again.stderr
            assert len(again.stderr.strip().splitlines()) == 1
        assert proc.returncode == 0, proc.stderr
        rounds[name] = proc.stderr.count("batch round")
        live_schemas = [
            seen.body["response_format"]["json_schema"]["name"]
            for seen in server.seen
            if seen.path.endswith("/chat/completions")
        ]
    assert live_schemas.count("Grounding") == 4 and live_schemas.count("RouterOutput") == 4
    assert " ".join(proc.stderr.split()).count("sent 4 requests live") == 2
    live_reports, mixed = _reports(tmp_path / "live"), _reports(tmp_path / "mixed")
    assert set(mixed) == set(live_reports)
    for clip_id, report in mixed.items():
        assert _findings(report) == _findings(live_reports[clip_id]), clip_id
        calls = report.manifest.calls
        assert calls == live_reports[clip_id].manifest.calls
        per_call = live_reports[clip_id].manifest.cost_usd / sum(calls.values())
        full = calls["grounding"] + calls["router"]
        assert report.manifest.cost_usd == pytest.approx(
            per_call * (full + (sum(calls.values()) - full) / 2), abs=1e-6
        )
    assert len(api.answered) == len(set(api.answered))
    assert len(api.answered) == sum(sum(r.manifest.calls.values()) - 2 for r in mixed.values())


def test_failed_and_expired_lines_go_again_and_nothing_is_billed_twice(forge_dir, tmp_path):
    """Every first line of a request fails once (a 500), and the second job expires with half
    its lines unanswered: those requests go out again next round, each answered exactly once."""
    api = BatchAPI(polls_to_finish=0, fail_once=lambda key, body: True, expire=lambda i: i == 1)
    with StandIn(router=api) as server:
        proc = _polled(
            forge_dir / "manifest.jsonl", tmp_path / "run", server.url + "/v1", _env(tmp_path),
            "--limit", "2",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(_reports(tmp_path / "run")) == 2
    assert len(api.answered) == len(set(api.answered))
    ledger = json.loads((tmp_path / "run" / "batch" / "jobs.json").read_text())
    assert {f["attempts"] for f in ledger["failures"].values()} >= {1}
    assert any(job["status"] == "expired" for job in ledger["jobs"])
    sent = [key for job in ledger["jobs"] for key in job["keys"]]
    assert len(sent) > len(set(sent))  # failed lines were sent again, as new lines


def test_a_refused_line_fails_its_call_as_a_live_400_does(forge_dir, tmp_path):
    def is_router(body: Any) -> bool:
        return body.get("response_format", {}).get("json_schema", {}).get("name") == "RouterOutput"

    manifest, env = forge_dir / "manifest.jsonl", _env(tmp_path)

    def live_reply(body: Any):
        return error_reply(400, "invalid image") if is_router(body) else minimal_chat(body)

    with StandIn(responder=live_reply) as live:
        proc = _run(
            manifest, tmp_path / "live", live.url + "/v1", env, "--no-cache", "--limit", "2"
        )
    assert proc.returncode == 0, proc.stderr
    api = BatchAPI(polls_to_finish=0, refuse=lambda key, body: is_router(body))
    with StandIn(router=api) as server:
        _polled(manifest, tmp_path / "batch", server.url + "/v1", env, "--limit", "2")
    live_reports, batch_reports = _reports(tmp_path / "live"), _reports(tmp_path / "batch")
    assert set(live_reports) == set(batch_reports)
    for clip_id, report in batch_reports.items():
        assert _findings(report) == _findings(live_reports[clip_id])
        assert any("router" in p for p in report.problems), report.problems


def test_a_line_that_never_gets_a_reply_fails_its_clip_after_the_retry_budget(forge_dir, tmp_path):
    failing = True

    def is_grounding(key: str, body: Any) -> bool:
        name = body.get("response_format", {}).get("json_schema", {}).get("name")
        return failing and name == "Grounding"

    api = BatchAPI(polls_to_finish=0, fail_always=is_grounding)
    with StandIn(router=api) as server:
        args = (
            forge_dir / "manifest.jsonl", tmp_path / "run", server.url + "/v1", _env(tmp_path),
            "--limit", "1", "--max-retries", "2",
        )  # fmt: skip
        proc = _polled(*args)
        assert proc.returncode == 1, proc.stderr
        run = json.loads((tmp_path / "run" / "run.json").read_text())
        (reason,) = run["failed"].values()
        assert "NoReplyError" in reason and "3 batch lines" in reason
        lines = [key for job in api.jobs for key, _ in job.lines]
        assert len(lines) == 3  # 1 + max_retries lines, then no more

        # the next command redoes the failed clip with a new budget, as a live resume does
        failing = False
        again = _polled(*args)
    assert again.returncode == 0, again.stderr
    assert "1 failed request given a new budget" in " ".join(again.stderr.split())
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert not run["failed"] and run["done"] == 1
    assert len(_reports(tmp_path / "run")) == 1


@pytest.mark.parametrize(("model", "path"), [("openai:m", "/v1"), ("gemini:g", "")])
def test_a_job_submitted_before_a_crash_is_found_not_paid_again(forge_dir, tmp_path, model, path):
    """The ledger records a job before the provider has it; a crash right after submitting
    leaves it without an id. The next command finds it by its label and collects it, and runs
    every later round itself (``--batch-poll-s``), polling each job once while it runs."""
    manifest, env = forge_dir / "manifest.jsonl", _env(tmp_path, model.split(":")[0])
    api = BatchAPI(polls_to_finish=1)
    with StandIn(router=api) as server:
        url = server.url + path
        first = _run(
            manifest, tmp_path / "run", url, env, "--batch-api", "--limit", "1", model=model
        )
        assert first.returncode == 0, first.stderr
        ledger_path = tmp_path / "run" / "batch" / "jobs.json"
        ledger = json.loads(ledger_path.read_text())
        (job,) = ledger["jobs"]
        job["job_id"], job["status"] = None, "submitting"  # as a crash after submit leaves it
        ledger_path.write_text(json.dumps(ledger))
        proc = _polled(manifest, tmp_path / "run", url, env, "--limit", "1", model=model)
    assert proc.returncode == 0, proc.stderr
    # a round that finds its job still running only polls: it submits nothing
    assert proc.stderr.count("batch round") >= 8 and "1 job running; 1 clip waiting" in proc.stderr
    assert len(api.answered) == len(set(api.answered))
    assert len([j for j in api.jobs if j.label == job["label"]]) == 1
    assert len(_reports(tmp_path / "run")) == 1


@pytest.mark.parametrize("live_roles", [(), ("grounding", "router")])
def test_gemini_batch_mode_gives_a_live_runs_reports(forge_dir, tmp_path, live_roles):
    manifest, env = forge_dir / "manifest.jsonl", _env(tmp_path, "gemini")
    extra = [arg for role in live_roles for arg in ("--batch-live", role)]

    def live_gemini(body: Any):
        return minimal_gemini(body)

    with StandIn(responder=live_gemini) as live:
        proc = _run(
            manifest, tmp_path / "live", live.url, env, "--no-cache", "--limit", "1",
            model="gemini:g",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    api = BatchAPI(polls_to_finish=1, fail_once=lambda key, body: key.startswith("a"))
    with StandIn(router=api) as server:
        proc = _polled(
            manifest, tmp_path / "batch", server.url, env, "--limit", "1", *extra,
            model="gemini:g",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    live_reports, batch_reports = _reports(tmp_path / "live"), _reports(tmp_path / "batch")
    assert set(live_reports) == set(batch_reports) and len(batch_reports) == 1
    for clip_id, report in batch_reports.items():
        assert _findings(report) == _findings(live_reports[clip_id])
        # every call in exactly one batch line, but the live roles' (one each per clip)
        calls = sum(report.manifest.calls.values())
        assert len(api.answered) == len(set(api.answered)) == calls - len(live_roles)
    assert all(job.provider == "gemini" for job in api.jobs)


def test_batch_runs_refuse_what_has_no_batch_api(forge_dir, tmp_path):
    manifest = str(forge_dir / "manifest.jsonl")
    for extra, message in [
        (("--model", "scripted:auto", "--batch-api"), "no batch API"),
        (("--model", "openai:m", "--batch-poll-s", "5"), "--batch-poll-s needs --batch-api"),
        (("--model", "openai:m", "--batch-live", "router"), "--batch-live needs --batch-api"),
        (("--model", "openai:m", "--batch-api", "--executor", "ray"), "local executor"),
        (("--method", "pixel", "--batch-api"), "calls a model"),
    ]:
        proc = gaze_cli("bench", "run", manifest, "--out", str(tmp_path / "x"), *extra,
                        env={"OPENAI_API_KEY": KEY})  # fmt: skip
        assert proc.returncode == 2 and message in proc.stderr, (extra, proc.stderr)
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
