"""`bench run --executor ray`: a manifest's clips spread over a Ray cluster.

Each worker is a Ray actor holding one CPU and its own caller (its node's response cache, its own
request limit); it decodes, runs the pixel pass and diagnoses the clips it is given, where it
runs. The driver hands out clips from one queue as workers free up, writes every report into
RUNDIR atomically as it arrives (so nothing finished is lost when a node dies), resumes like the
local executor (finished reports are skipped) and writes the same ``run.json``.

Needs: the ``ray`` extra (``pip install 'gaze[ray]'``); gaze installed on every node; video paths
that every node can read (a shared file system, as for any Ray pipeline); API keys set in the
nodes' environment (gaze never ships secrets through Ray). ``GAZE_CACHE_DIR``, when the driver
sets it, is passed to the workers: one cache on a shared path instead of one per node.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gaze.atomic import atomic_write_text, inside
from gaze.bench import CLIPS_IN_FLIGHT
from gaze.bench.run import (
    PreparedRun,
    Progress,
    RunSummary,
    failure_reason,
    is_finished,
    make_report,
    run_caller,
    write_run_manifest,
)
from gaze.bench.transcripts import write_transcript
from gaze.errors import GazeInputError
from gaze.models.caller import Caller
from gaze.models.protocol import ModelConfigError
from gaze.models.transcript import Transcript, recording
from gaze.redact import redact
from gaze.schema.manifest import ManifestClip
from gaze.schema.report import Report
from gaze.settings.context import GazeContext

PASSED_TO_WORKERS = ("GAZE_CACHE_DIR", "GAZE_PRICES")
"""Environment the workers get from the driver (paths, never keys)."""


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise GazeInputError(
            "--executor ray needs Ray: pip install 'gaze[ray]' (on every node of the cluster)"
        ) from None
    return ray


class ClipWorker:
    """One Ray actor: diagnoses the clips it is handed with one caller of its own."""

    def __init__(self, ctx: GazeContext, method: str, samples: int, manifest: str) -> None:
        self.ctx = ctx
        self.method = method
        self.samples = samples
        self.manifest = Path(manifest)
        self._caller: Caller | None = None

    async def run_clip(self, row_json: str) -> dict[str, str]:
        """``{"report": JSON}``, ``{"error": reason}`` or ``{"config_error": reason}``, with the
        node that did the work."""
        import ray

        node = ray.get_runtime_context().get_node_id()
        row = ManifestClip.model_validate_json(row_json)
        with recording(row.clip_id) as log:
            try:
                if self._caller is None:
                    self._caller = await asyncio.to_thread(run_caller, self.method, self.ctx, None)
                report = await make_report(
                    self.method, self.manifest, row, self.ctx, self.samples, self._caller
                )
            except ModelConfigError as exc:
                return {"config_error": redact(str(exc)), "node": node, **_kept(log)}
            except Exception as exc:  # one clip's failure never stops the others
                return {"error": failure_reason(exc), "node": node, **_kept(log)}
        return {"report": report.model_dump_json(indent=2) + "\n", "node": node, **_kept(log)}

    async def close(self) -> None:
        if self._caller is not None:
            await self._caller.aclose()


def _kept(log: Transcript) -> dict[str, str]:
    """A clip's transcript, sent back to the driver to be written in the run folder."""
    return {"transcript": log.text()} if log.exchanges else {}


def worker_resources(gpus_per_worker: float) -> dict[str, float]:
    """What one worker holds: a CPU, and with ``--model vllm:MODEL`` the GPU(s) of the
    in-process engine it builds (one engine per worker)."""
    return {"num_cpus": 1, **({"num_gpus": gpus_per_worker} if gpus_per_worker else {})}


def default_workers(cluster: dict[str, float], gpus_per_worker: float) -> int:
    """One worker per CPU of the cluster, or as many as its GPUs hold when workers take GPUs."""
    if gpus_per_worker:
        return max(1, int(cluster.get("GPU", 0) // gpus_per_worker))
    return max(1, int(cluster.get("CPU", 1)))


def _shippable(ctx: GazeContext) -> GazeContext:
    """The context with its environment defaults resolved on the driver (the workers' own
    environment may differ)."""
    return dataclasses.replace(ctx, model=ctx.resolved_model(), base_url=ctx.resolved_base_url())


async def execute_on_ray(
    plan: PreparedRun,
    *,
    address: str | None = None,
    workers: int = 0,
    clip_concurrency: int = CLIPS_IN_FLIGHT,
    gpus_per_worker: float = 0.0,
    on_progress: Progress | None = None,
) -> RunSummary:
    """Run ``plan`` on the Ray cluster at ``address`` (None: a local Ray started here) with
    ``workers`` actors (0: one per CPU of the cluster, or per GPU when workers hold GPUs), each
    running ``clip_concurrency`` clips at once."""
    ray = import_ray()
    summary = RunSummary()
    reports = plan.outdir / "reports"
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    started = time.perf_counter()
    pending: asyncio.Queue[ManifestClip] = asyncio.Queue()
    for row in plan.rows:
        if is_finished(inside(reports, f"{row.clip_id}.json")):
            summary.skipped.append(row.clip_id)
            if on_progress:
                on_progress(row.clip_id, None, None)
        else:
            pending.put_nowait(row)
    owns_ray = not ray.is_initialized()
    if owns_ray:
        try:
            await asyncio.to_thread(
                ray.init,
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level="ERROR",
            )
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise GazeInputError(f"cannot reach the Ray cluster at {address}: {exc}") from None
    nodes: Counter[str] = Counter()
    config_errors: list[str] = []
    actors: list[Any] = []
    try:
        resources = worker_resources(gpus_per_worker)
        count = workers or default_workers(ray.cluster_resources(), gpus_per_worker)
        env = {k: os.environ[k] for k in PASSED_TO_WORKERS if os.environ.get(k)}
        remote = ray.remote(**resources, max_concurrency=max(1, clip_concurrency))(ClipWorker)
        ctx = _shippable(plan.ctx)
        actors = [
            remote.options(runtime_env={"env_vars": env} if env else None).remote(
                ctx, plan.method, plan.samples, str(plan.manifest.resolve())
            )
            for _ in range(count)
        ]

        async def feed(actor: Any) -> None:
            while not pending.empty() and not config_errors:
                row = pending.get_nowait()
                try:
                    result = await actor.run_clip.remote(row.model_dump_json())
                except ray.exceptions.RayError as exc:  # the worker or its node died
                    summary.failed[row.clip_id] = failure_reason(exc)
                    if on_progress:
                        on_progress(row.clip_id, None, summary.failed[row.clip_id])
                    return  # this worker takes no more clips; the others go on
                nodes[result["node"]] += 1
                if "transcript" in result:
                    await asyncio.to_thread(
                        write_transcript, plan.outdir, row.clip_id, result["transcript"]
                    )
                if "report" in result:
                    target = inside(reports, f"{row.clip_id}.json")
                    atomic_write_text(target, result["report"])
                    summary.done.append(row.clip_id)
                    if on_progress:
                        on_progress(row.clip_id, Report.model_validate_json(result["report"]), None)
                elif "config_error" in result:
                    config_errors.append(result["config_error"])
                    summary.failed[row.clip_id] = result["config_error"]
                else:
                    summary.failed[row.clip_id] = result["error"]
                    if on_progress:
                        on_progress(row.clip_id, None, result["error"])

        await asyncio.gather(
            *(feed(actor) for actor in actors for _ in range(max(1, clip_concurrency)))
        )
        while not pending.empty():  # every worker died: what is left is failed, redone on resume
            row = pending.get_nowait()
            summary.failed[row.clip_id] = "no Ray worker left to run it"
        await asyncio.gather(*(actor.close.remote() for actor in actors), return_exceptions=True)
    finally:
        for actor in actors:
            ray.kill(actor)
        await plan.caller.aclose()
        if owns_ray:
            await asyncio.to_thread(ray.shutdown)
    if config_errors:
        raise ModelConfigError(config_errors[0])
    write_run_manifest(
        plan,
        summary,
        started_at=started_at,
        wall_time_s=time.perf_counter() - started,
        executor={
            "name": "ray",
            "address": address or "local",
            "workers": len(actors),
            "clips_per_node": dict(nodes),
        },
    )
    return summary
