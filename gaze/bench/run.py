"""`bench run`: one method over every clip of a manifest, with bounded concurrency, one report
file per clip (written atomically), a run manifest, resume after interruption, and failures
recorded without stopping the others."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gaze import __version__
from gaze.atomic import atomic_write_text, claim_folder, inside
from gaze.bench import B2_SAMPLES, CLIPS_IN_FLIGHT
from gaze.bench.baselines import BASELINE_PROMPTS, baseline_settings, run_baseline
from gaze.bench.inputs import load_manifest, video_path
from gaze.bench.methods import BASELINES, METHODS
from gaze.bench.selection import Selection, select_rows
from gaze.bench.transcripts import transcribed
from gaze.errors import GazeInputError
from gaze.formats.jsonl import JSON_ERRORS
from gaze.models.caller import Caller, usage_totals
from gaze.models.pool import EndpointPool, clip_affinity
from gaze.models.protocol import Backbone, ModelConfigError
from gaze.prompts import load_prompt
from gaze.redact import redact
from gaze.schema.dimensions import DIMENSIONS
from gaze.schema.manifest import ManifestClip
from gaze.schema.report import Assessment, Report, run_manifest
from gaze.settings.caller import sampling_of
from gaze.settings.context import GazeContext

Progress = Callable[[str, Report | None, str | None], None]


@dataclass
class RunSummary:
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    waiting: list[str] = field(default_factory=list)
    """Clips stopped at a request that went into a batch job (``--batch-api``)."""


def git_hash() -> str | None:
    """The commit of the gaze checkout in use (None when not run from a git checkout)."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parent,
            timeout=5,
            check=True,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _settings(method: str, ctx: GazeContext, samples: int) -> dict[str, Any]:
    """What the method computes with, as its reports record it (and a resumed run must match):
    how the run goes (limits, deadlines, prices) is left out (``GazeContext.computed``)."""
    if method == "pixel":  # no model: only the sampling decides what it computes
        return {"method": method, **dataclasses.asdict(sampling_of(ctx))}
    if method in BASELINES:
        return {"method": method, **baseline_settings(method, ctx, samples).record()}
    return {"method": method, **ctx.computed()}


def _check_resume(outdir: Path, identity: dict[str, Any]) -> None:
    previous = outdir / "run.json"
    if not previous.exists():
        return
    try:
        old = json.loads(previous.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, *JSON_ERRORS) as exc:
        raise GazeInputError(f"{previous} is unreadable ({exc}); use a fresh --out") from exc
    differing = [k for k, v in identity.items() if old.get(k) != v]
    if differing:
        raise GazeInputError(
            f"{outdir} holds a run with other {', '.join(differing)}; "
            "use a fresh --out to start a new run"
        )


def is_finished(path: Path) -> bool:
    try:
        Report.model_validate_json(path.read_text(encoding="utf-8"))
        return True
    except (OSError, ValueError):
        return False


async def _baseline_report(
    method: str, row: ManifestClip, video: Path, ctx: GazeContext, samples: int, caller: Caller
) -> Report:
    from gaze.video.clip import open_clip
    from gaze.video.frames import encode_jpeg
    from gaze.video.store import window_frames

    started = time.perf_counter()
    clip = await asyncio.to_thread(open_clip, video, sampling_of(ctx), encode=True)
    frames = window_frames(clip, [w.index for w in clip.windows])
    events, records, problems = await run_baseline(
        caller,
        baseline_settings(method, ctx, samples),
        row.instruction,
        frames,
        (0.0, encode_jpeg(clip.initial_frame)),
        clip.info.duration_s,
    )
    return Report(
        clip_id=row.clip_id,
        instruction=row.instruction,
        clip=clip.info,
        events=[] if problems and not events else events,
        flags=(["parse_failed"] if problems and not events else []) + list(clip.flags),
        assessment=Assessment(
            mode="baseline",
            assessed=list(DIMENSIONS),
            not_assessed=[],
            note=f"Control method {method}; see gaze.bench.baselines.",
        ),
        problems=[redact(p) for p in problems],
        manifest=run_manifest(
            _settings(method, ctx, samples),
            time.perf_counter() - started,
            prompts=[load_prompt(p).record for p in BASELINE_PROMPTS[method]],
            models={r["role"]: r["model"] for r in records},
            usage=usage_totals(records, caller.pricing),
        ),
    )


@dataclass
class PreparedRun:
    """Everything checked before the first clip: inputs, output folder, backbones."""

    manifest: Path
    rows: list[ManifestClip]
    method: str
    outdir: Path
    ctx: GazeContext
    identity: dict[str, Any]
    samples: int
    caller: Caller
    """One caller for the whole run: one cache, one limit on requests in flight."""
    selection: dict[str, Any] | None = None
    """The clip filter (``gaze.bench.selection``) and how many clips it chose of how many."""
    config: dict[str, Any] | None = None
    """The ``--config`` file the command read (path, sha256, its values, secrets masked)."""


async def prepare_run(
    manifest: str | Path,
    method: str,
    outdir: str | Path,
    ctx: GazeContext,
    *,
    samples: int = B2_SAMPLES,
    preflight: bool = True,
    backbones: Mapping[str, Backbone] | None = None,
    selection: Selection | None = None,
    config: dict[str, Any] | None = None,
) -> PreparedRun:
    """Validate the manifest, the output folder (and any earlier run in it) and every backbone;
    bad input fails here, in one line, before any clip work."""
    if method not in METHODS:
        raise GazeInputError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    manifest = Path(manifest)
    rows = load_manifest(manifest)
    chosen, record = rows, None
    if selection is not None and selection.filters:
        chosen = select_rows(rows, selection)
        record = selection.record(len(chosen), len(rows))
    outdir = claim_folder(outdir, empty=False)
    try:
        (outdir / "reports").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GazeInputError(f"cannot create {outdir / 'reports'}: {exc.strerror}") from exc
    identity = {
        "method": method,
        "settings": _settings(method, ctx, samples),
        "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(),
    }
    _check_resume(outdir, identity)
    # bad model names and keys fail here; each backbone's start-up check runs before its first
    # uncached request (a rerun answered from the cache needs no server)
    caller = await asyncio.to_thread(run_caller, method, ctx, backbones, preflight)
    return PreparedRun(
        manifest, chosen, method, outdir, ctx, identity, samples, caller, record, config
    )


def run_caller(
    method: str, ctx: GazeContext, backbones: Mapping[str, Backbone] | None, check: bool = True
) -> Caller:
    """The caller a run's method needs: none bound for ``pixel``, else the context's models."""
    if method == "pixel":
        return Caller({})
    from gaze.settings.caller import build_caller

    return build_caller(ctx, backbones, check=check)


async def run_benchmark(
    manifest: str | Path,
    method: str,
    outdir: str | Path,
    ctx: GazeContext,
    *,
    clip_concurrency: int = CLIPS_IN_FLIGHT,
    samples: int = B2_SAMPLES,
    on_progress: Progress | None = None,
    preflight: bool = True,
    backbones: Mapping[str, Backbone] | None = None,
) -> RunSummary:
    plan = await prepare_run(
        manifest, method, outdir, ctx, samples=samples, preflight=preflight, backbones=backbones
    )
    return await execute_run(plan, clip_concurrency=clip_concurrency, on_progress=on_progress)


async def make_report(
    method: str,
    manifest: Path,
    row: ManifestClip,
    ctx: GazeContext,
    samples: int,
    caller: Caller,
) -> Report:
    """One clip's report by ``method`` (the same work whichever executor runs it)."""
    from gaze.api import adiagnose

    clip_affinity.set(row.clip_id)  # this task's requests prefer one pool endpoint
    video = video_path(manifest, row)
    if method == "pixel":
        from gaze.pixels.diagnosis import diagnose_pixels
        from gaze.schema.inputs import ClipInput

        clip = ClipInput(clip_id=row.clip_id, video=str(video), instruction=row.instruction)
        return await asyncio.to_thread(diagnose_pixels, clip, sampling_of(ctx))
    if method == "robogaze":
        scene = manifest.parent / row.initial_frame if row.initial_frame else None
        return await adiagnose(
            video,
            row.instruction,
            clip_id=row.clip_id,
            initial_frame=scene,
            context=ctx,
            caller=caller,
        )
    return await _baseline_report(method, row, video, ctx, samples, caller)


def failure_reason(exc: BaseException) -> str:
    """A clip's failure as run.json records it: one line, no secrets."""
    return redact(" ".join(f"{type(exc).__name__}: {exc}".split()))


AfterClips = Callable[[RunSummary], Awaitable[dict[str, Any]]]
"""Work after every clip has run and before ``run.json`` is written; what it returns is
recorded there under ``executor`` (a batch round submits its jobs here)."""


async def execute_run(
    plan: PreparedRun,
    *,
    clip_concurrency: int = CLIPS_IN_FLIGHT,
    on_progress: Progress | None = None,
    waiting: tuple[type[BaseException], ...] = (),
    after_clips: AfterClips | None = None,
) -> RunSummary:
    """Every clip of the plan (finished reports are kept, not redone); a clip that raises one
    of ``waiting`` is neither done nor failed: it goes on in a later run."""
    rows, reports = plan.rows, plan.outdir / "reports"
    caller = plan.caller
    summary = RunSummary()
    config_error: list[ModelConfigError] = []
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.perf_counter()
    gate = asyncio.Semaphore(max(1, clip_concurrency))

    async def one(row: ManifestClip) -> None:
        target = inside(reports, f"{row.clip_id}.json")
        if is_finished(target):
            summary.skipped.append(row.clip_id)
            if on_progress:
                on_progress(row.clip_id, None, None)
            return
        async with gate:
            try:
                async with transcribed(plan.outdir, row.clip_id):
                    report = await make_report(
                        plan.method, plan.manifest, row, plan.ctx, plan.samples, caller
                    )
                atomic_write_text(target, report.model_dump_json(indent=2) + "\n")
                summary.done.append(row.clip_id)
                if on_progress:
                    on_progress(row.clip_id, report, None)
            except waiting:
                summary.waiting.append(row.clip_id)
                if on_progress:
                    on_progress(row.clip_id, None, None)
            except ModelConfigError as exc:  # the backbone cannot work for any clip
                config_error.append(exc)
                summary.failed[row.clip_id] = redact(str(exc))
            except Exception as exc:  # one clip's failure never stops the others
                summary.failed[row.clip_id] = failure_reason(exc)
                if on_progress:
                    on_progress(row.clip_id, None, summary.failed[row.clip_id])

    finished = False
    executor = None
    try:
        await asyncio.gather(*(one(row) for row in rows))
        if after_clips is not None and not config_error:
            executor = await after_clips(summary)
        finished = True
    finally:
        await caller.aclose()
        if not finished:  # Ctrl-C or a cancelled task: what was done is still recorded
            write_run_manifest(
                plan,
                summary,
                started_at=started_at,
                wall_time_s=time.perf_counter() - started,
                interrupted=True,
            )
    if config_error:
        raise config_error[0]
    pools = {id(b): b for b in caller.bindings.values() if isinstance(b, EndpointPool)}
    write_run_manifest(
        plan,
        summary,
        started_at=started_at,
        wall_time_s=time.perf_counter() - started,
        endpoints={f"{p.provider}:{p.model}": p.stats() for p in pools.values()},
        executor=executor,
    )
    return summary


def write_run_manifest(
    plan: PreparedRun,
    summary: RunSummary,
    *,
    started_at: str,
    wall_time_s: float,
    endpoints: dict[str, Any] | None = None,
    executor: dict[str, Any] | None = None,
    interrupted: bool = False,
) -> None:
    """``run.json``: the run's identity, outcome and totals summed over its reports (also when
    the run was ``interrupted``: the reports written so far count, the rest run on resume)."""
    rows, reports = plan.rows, plan.outdir / "reports"
    summed = (
        "input_tokens",
        "estimated_input_tokens",
        "cached_input_tokens",
        "output_tokens",
        "images",
        "cache_hits",
        "cost_usd",
    )
    totals: dict[str, float] = {"calls": 0, **dict.fromkeys(summed, 0)}
    for row in rows:
        path = inside(reports, f"{row.clip_id}.json")
        if is_finished(path):
            m = Report.model_validate_json(path.read_text(encoding="utf-8")).manifest
            totals["calls"] += sum(m.calls.values())
            for key in summed:
                totals[key] += getattr(m, key)
    totals["cost_usd"] = round(totals["cost_usd"], 6)
    bindings = plan.caller.bindings
    run_manifest = {
        **plan.identity,
        "gaze_version": __version__,
        "git": git_hash(),
        "manifest": str(plan.manifest.resolve()),
        "models": {role: f"{b.provider}:{b.model}" for role, b in bindings.items()},
        "started_at": started_at,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_time_s": round(wall_time_s, 3),
        "clips": len(rows),
        "done": len(summary.done),
        "resumed": len(summary.skipped),
        "failed": summary.failed,
        **({"waiting": len(summary.waiting)} if summary.waiting else {}),
        **totals,
    }
    if plan.selection:
        run_manifest["selection"] = plan.selection
    if plan.config:
        run_manifest["config"] = plan.config
    if interrupted:
        run_manifest["interrupted"] = True
    if endpoints:  # how the fleet carried the run: requests, failures, times down, per endpoint
        run_manifest["endpoints"] = endpoints
    if executor:
        run_manifest["executor"] = executor
    atomic_write_text(plan.outdir / "run.json", json.dumps(run_manifest, indent=2) + "\n")
