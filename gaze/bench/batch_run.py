"""`bench run --batch-api`: one round of a run through the providers' batch APIs.

A round (1) collects every job of earlier rounds that has finished: the replies go into the run
folder's store of batch replies, lines without one are counted against their request's budget;
(2) runs every unfinished clip against those replies (``gaze.models.batch.deferred``): a clip
whose every request has a reply is reported, the others stop at their next stage; (3) submits
what the clips asked for, one job per backbone (more where the API's limits on a job say so).
The jobs are recorded before and after they are submitted, so a round that crashes mid-way
finds its job at the provider rather than paying for it again.

The folder ``RUNDIR/batch`` holds ``jobs.json`` (the jobs, what came of each line) and
``responses.sqlite`` (every reply collected, valid or not: a retry after an invalid reply must
find the same reply, not send the request again).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gaze.atomic import atomic_write_text
from gaze.bench.run import PreparedRun, Progress, RunSummary, execute_run
from gaze.errors import GazeInputError
from gaze.formats.jsonl import JSON_ERRORS
from gaze.models.batch.deferred import Book, CallDeferred, LineFailure, deferring
from gaze.models.batch.jobs import BatchJobs, Line, jobs_for
from gaze.models.cache import ResponseCache
from gaze.models.pool import EndpointPool
from gaze.models.protocol import Backbone, ModelCallError, TransientModelError

FOLDER = "batch"
JOBS_FILE = "jobs.json"


@dataclass
class Job:
    """One job at a provider, as the run folder records it."""

    label: str
    """The name gaze gave it (the job's metadata or display name: found again after a crash)."""
    model: str
    keys: list[str]
    job_id: str | None = None
    """None between recording the job and the provider accepting it."""
    status: str = "submitting"
    open: bool = True
    submitted_at: str = ""


@dataclass
class Ledger:
    """``jobs.json``: the run's jobs and what became of each request's lines."""

    tag: str = field(default_factory=lambda: secrets.token_hex(4))
    """In every job's label: two runs in one account never take each other's jobs."""
    rounds: int = 0
    jobs: list[Job] = field(default_factory=list)
    failures: dict[str, LineFailure] = field(default_factory=dict)
    live_roles: list[str] = field(default_factory=list)
    """The roles the run sends live (``--batch-live``), fixed by its first round: the report's
    cost bills each call at the rate it was sent at."""

    @staticmethod
    def read(path: Path) -> Ledger:
        if not path.exists():
            return Ledger()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return Ledger(
                data["tag"],
                data["rounds"],
                [Job(**job) for job in data["jobs"]],
                {k: LineFailure(**v) for k, v in data["failures"].items()},
                list(data.get("live_roles", [])),  # a run folder from before --batch-live
            )
        except (OSError, UnicodeDecodeError, KeyError, TypeError, *JSON_ERRORS) as exc:
            raise GazeInputError(f"{path} is unreadable ({exc}); use a fresh --out") from exc

    def write(self, path: Path) -> None:
        atomic_write_text(path, json.dumps(asdict(self), indent=1) + "\n")


@dataclass
class RoundReport:
    """What one round did, as ``run.json`` records it under ``executor.batch_api``."""

    round: int
    collected_jobs: int = 0
    replies: int = 0
    failed_lines: int = 0
    refused_lines: int = 0
    running_jobs: int = 0
    submitted_jobs: int = 0
    submitted_lines: int = 0
    live_requests: int = 0
    """Requests of the run's live roles (``--batch-live``) this round sent live."""
    lost_jobs: int = 0
    """Jobs recorded before a crash that the provider never accepted (their lines go again)."""
    fresh_budgets: int = 0
    """Requests whose lines had all failed in an earlier invocation, given a new retry budget
    by this one (a clip that failed for want of replies is redone, as a live resume redoes
    it)."""
    problems: list[str] = field(default_factory=list)


def batch_jobs(plan: PreparedRun) -> dict[str, BatchJobs]:
    """Each backbone's batch API by ``provider:model`` (a run that cannot be sent as batch
    jobs fails here, in one line, before any clip work)."""
    if plan.method == "pixel":
        raise GazeInputError("--batch-api needs a method that calls a model (not pixel)")
    return {name: jobs_for(backbone) for name, backbone in live_backbones(plan).items()}


def check_live_roles(plan: PreparedRun, live_roles: frozenset[str]) -> None:
    """Fail in one line, before any work, when the run folder's earlier rounds sent other
    roles live (reads the folder: not on an event loop)."""
    _check_live_roles(plan, Ledger.read(plan.outdir / FOLDER / JOBS_FILE), live_roles)


def _check_live_roles(plan: PreparedRun, ledger: Ledger, live_roles: frozenset[str]) -> None:
    if ledger.rounds and set(ledger.live_roles) != live_roles:  # the cost would be wrong
        raise GazeInputError(
            f"{plan.outdir} sends {_live_text(ledger.live_roles)} (its first round's "
            "--batch-live): run it again with the same --batch-live"
        )


def live_backbones(plan: PreparedRun) -> dict[str, Backbone]:
    """The run's backbones by ``provider:model``."""
    found: dict[str, Backbone] = {}
    for backbone in plan.caller.bindings.values():
        if isinstance(backbone, EndpointPool):
            raise GazeInputError(
                "--batch-api sends every call to one endpoint per model, not a pool"
            )
        found[f"{backbone.provider}:{backbone.model}"] = backbone
    return found


async def batch_round(
    plan: PreparedRun,
    *,
    clip_concurrency: int,
    on_progress: Progress | None = None,
    fresh_budgets: bool = False,
    live_roles: frozenset[str] = frozenset(),
) -> tuple[RunSummary, RoundReport]:
    """One round: collect, advance every clip one stage, submit (see the module's text). With
    ``fresh_budgets`` (the first round of a command), a request that spent its whole budget
    in an earlier command gets a new one: the clip it failed is redone. ``live_roles`` are
    sent live (a run keeps those of its first round: anything else fails in one line)."""
    jobs = batch_jobs(plan)
    folder = plan.outdir / FOLDER
    path = folder / JOBS_FILE
    await asyncio.to_thread(folder.mkdir, exist_ok=True)
    ledger = await asyncio.to_thread(Ledger.read, path)
    _check_live_roles(plan, ledger, live_roles)
    ledger.live_roles = sorted(live_roles)
    store = ResponseCache(folder)
    await asyncio.to_thread(store.open)
    report = RoundReport(round=ledger.rounds + 1)
    book = Book(
        store,
        budget=1 + plan.ctx.max_retries,
        failures=ledger.failures,
        live_roles=live_roles,
    )
    if fresh_budgets:
        for failure in ledger.failures.values():
            if failure.attempts >= book.budget and not failure.permanent:
                failure.attempts = 0
                report.fresh_budgets += 1

    async def save() -> None:
        await asyncio.to_thread(ledger.write, path)

    for job in [j for j in ledger.jobs if j.open and j.model in jobs]:
        await _collect(job, jobs[job.model], book, report, save)

    async def submit(summary: RunSummary) -> dict[str, Any]:
        by_model: dict[str, list[Line]] = {}
        for key, (backbone, request) in book.registered.items():
            by_model.setdefault(f"{backbone.provider}:{backbone.model}", []).append((key, request))
        ledger.rounds = report.round
        report.live_requests = book.live_sent
        for model, lines in by_model.items():
            for chunk in jobs[model].split(lines):
                await _submit(chunk, model, jobs[model], ledger, report, save)
        report.running_jobs = sum(j.open for j in ledger.jobs)
        await save()
        return {"batch_api": asdict(report)}

    try:
        with deferring(plan.caller, book):
            summary = await execute_run(
                plan,
                clip_concurrency=clip_concurrency,
                on_progress=on_progress,
                waiting=(CallDeferred,),
                after_clips=submit,
            )
    finally:
        await asyncio.to_thread(store.close)
    return summary, report


def round_line(summary: RunSummary, report: RoundReport) -> str:
    """What a round did, in one line for the terminal."""
    parts = [f"batch round {report.round}"]
    if report.fresh_budgets:
        parts.append(f"{_count(report.fresh_budgets, 'failed request')} given a new budget")
    if report.collected_jobs:
        missing = report.failed_lines + report.refused_lines
        parts.append(
            f"collected {_count(report.collected_jobs, 'job')} ("
            f"{_count(report.replies, 'reply', 'replies')}, {missing} lines without one)"
        )
    if report.submitted_jobs:
        parts.append(
            f"submitted {_count(report.submitted_jobs, 'job')} of "
            f"{_count(report.submitted_lines, 'request')}"
        )
    if report.live_requests:
        parts.append(f"sent {_count(report.live_requests, 'request')} live")
    if report.running_jobs:
        parts.append(f"{_count(report.running_jobs, 'job')} running")
    parts.append(f"{_count(len(summary.waiting), 'clip')} waiting")
    return "; ".join(parts)


def _live_text(roles: list[str]) -> str:
    if not roles:
        return "every call as batch lines"
    return f"the {', '.join(roles)} calls live"


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


async def _collect(
    job: Job, api: BatchJobs, book: Book, report: RoundReport, save: Callable[[], Any]
) -> None:
    """A job's replies into the store and its failed lines into the ledger, once it ended."""
    try:
        if job.job_id is None:
            job.job_id = await api.find(job.label)
            if job.job_id is None:  # recorded, never accepted: nothing was billed
                job.open, job.status = False, "never submitted"
                report.lost_jobs += 1
                await save()
                return
        found = await api.collect(job.job_id)
    except TransientModelError as exc:  # asked again next round
        report.problems.append(f"{job.label}: {exc}")
        book.pending.update(job.keys)
        return
    job.status = found.status
    if found.running:
        book.pending.update(job.keys)
        return
    for key, reply in found.replies.items():
        await book.replies.aput(key, reply)
    for key in job.keys:
        if key in found.replies:
            continue
        failure = book.failures.setdefault(key, LineFailure())
        if key in found.refused:
            failure.permanent = found.refused[key]
            report.refused_lines += 1
        else:
            failure.attempts += 1
            report.failed_lines += 1
    report.replies += sum(key in found.replies for key in job.keys)
    report.collected_jobs += 1
    job.open = False
    await save()  # after the replies are stored: a crash before it collects the job again


async def _submit(
    lines: list[Line],
    model: str,
    api: BatchJobs,
    ledger: Ledger,
    report: RoundReport,
    save: Callable[[], Any],
) -> None:
    label = f"gaze-{ledger.tag}-r{report.round}-{len(ledger.jobs)}"
    job = Job(label, model, [key for key, _ in lines])
    ledger.jobs.append(job)
    await save()  # recorded first: a crash from here on finds the job by its label
    try:
        job.job_id = await api.submit(lines, label)
    except TransientModelError as exc:  # found by its label or sent again next round
        report.problems.append(f"{label}: {exc}")
        return
    except ModelCallError as exc:  # the API refused the job: each line lost one attempt
        report.problems.append(f"{label}: refused ({exc})")
        job.open, job.status = False, f"refused ({exc})"
        for key in job.keys:
            ledger.failures.setdefault(key, LineFailure()).attempts += 1
        report.failed_lines += len(job.keys)
        await save()
        return
    job.status = "submitted"
    job.submitted_at = datetime.now(UTC).isoformat(timespec="seconds")
    report.submitted_jobs += 1
    report.submitted_lines += len(lines)
    await save()
