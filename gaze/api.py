"""The Python entry points: ``diagnose`` (sync) and ``adiagnose`` (async) return a Report.

Without a model (no ``model``, no ``backbones``, no ``GAZE_MODEL``) they run the pixel-evidence
default; with one they run the diagnosis graph, after a pre-flight check of every backbone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gaze.errors import GazeInputError
from gaze.models.protocol import Backbone, ClipTimeoutError
from gaze.schema.input_rules import clip_fields

if TYPE_CHECKING:  # the report's models load while the clip runs, not before its request
    from gaze.schema.report import Report

ProgressHook = Callable[[str, dict[str, Any]], None]
"""Called with (node, its update) as the graph's nodes end, and with ("progress_note", note)
for what a run reports between them: ``STARTED`` once the clip's first request is on its way
(a display drawn from then on keeps its own start-up off that request's path), then
``{"window_observed": index}`` as each window's call ends."""
STARTED: dict[str, Any] = {"started": True}
"""The first progress note: the clip's first requests are on the wire
(``Caller.first_requests_out``), or the work started early ended without one (every reply
cached, or a failure)."""


async def adiagnose(
    video: str | Path,
    instruction: str,
    *,
    initial_frame: str | Path | None = None,
    clip_id: str | None = None,
    model: str | None = None,
    roles: Mapping[str, str] | None = None,
    base_url: str | None = None,
    backbones: Mapping[str, Backbone] | None = None,
    context: Any = None,
    on_update: ProgressHook | None = None,
    preflight: bool = True,
    caller: Any = None,
) -> Report:
    """Diagnose one clip. ``context`` (a GazeContext) carries every other setting;
    ``backbones`` are backbone objects by role (or 'default'), winning over model names;
    ``caller`` (a ``gaze.models.caller.Caller``) shares one cache and request limit across
    many clips (batch runs)."""
    from gaze.settings.context import GazeContext, check_pixel_default, has_model

    inputs = clip_fields(video, instruction, initial_frame, clip_id)
    ctx = context or GazeContext()
    changes: dict[str, Any] = {}
    if model is not None:
        changes["model"] = model
    if roles:
        changes["roles"] = {**ctx.roles, **roles}
    if base_url is not None:
        changes["base_url"] = base_url
    ctx = dataclasses.replace(ctx, **changes) if changes else ctx
    if ctx.review:
        raise GazeInputError(
            "review pauses the run for a person: use it in LangGraph Studio, or run "
            "gaze.graph.build_graph(checkpointer=...) with a thread id and resume it"
        )
    if not has_model(ctx, given=bool(backbones) or caller is not None):
        from gaze.pixels.diagnosis import diagnose_pixels

        check_pixel_default(ctx)  # the CLI's and Studio's rule: one line, not a silent report

        from gaze.schema.inputs import ClipInput

        return await asyncio.to_thread(diagnose_pixels, ClipInput(**inputs))
    return await _run_graph(inputs, ctx, on_update, preflight, backbones, caller)


async def _run_graph(
    inputs: dict[str, Any],
    ctx: Any,
    on_update: ProgressHook | None,
    preflight: bool,
    backbones: Mapping[str, Backbone] | None,
    caller: Any,
) -> Report:
    from gaze.cpu_priority import in_lower_thread
    from gaze.graph.early import start_early
    from gaze.graph.services import clip_store, close_run, new_run_id, open_run
    from gaze.models.pool import clip_affinity
    from gaze.models.providers import legacy_httpx

    started_at = time.time()
    run_id = new_run_id()
    # the clip's decoding child starts first: it runs while the SDK clients load
    clips = clip_store(ctx)
    if not _graph_loaded():  # the process's first clip: its first request before NumPy
        clips.hold_heavy()
    clips.start(inputs["video"])
    # bad model names, keys and settings fail here, before any clip work is reported; the
    # backbones' start-up check runs alongside their first uncached requests
    try:
        if caller is None:
            with legacy_httpx.deferred():  # settled below, after the first request
                svc = await asyncio.to_thread(
                    open_run, run_id, ctx, backbones=backbones, check=preflight, clips=clips
                )
        else:
            svc = open_run(run_id, ctx, caller=caller, clips=clips)
    except BaseException:
        clips.close()
        raise
    svc.started_at = started_at  # the report's wall time includes building the clients
    # every request of this clip prefers one endpoint of a pool (its prefix cache)
    affinity = clip_affinity.set(inputs["clip_id"])
    layout: asyncio.Future[Any] | None = None
    try:
        if not Path(inputs["video"]).exists():
            raise GazeInputError(f"no such file: {inputs['video']}")
        # grounding calls, decoding and the pixel pass start while the graph module loads
        layout = start_early(inputs, svc, ctx)
        await _first_requests_out(svc)
        if on_update is not None:
            on_update("progress_note", dict(STARTED))  # a hook may keep or change its note
        # on this thread, where replies are parsed, before the graph module imports it too
        legacy_httpx.settle_legacy_httpx()
        clips.release_heavy()
        graph = await in_lower_thread(
            _load_graph, name="gaze-graph-load", niceness=GRAPH_LOAD_NICENESS
        )
        ctx = await layout  # segments as long as the servers take
        config = {"run_id": uuid.UUID(run_id), "recursion_limit": 100}
        deadline = asyncio.timeout(ctx.clip_timeout_s)
        try:
            async with deadline:
                final = await _stream(graph, inputs, config, ctx, on_update)
        except TimeoutError:
            if not deadline.expired():
                raise
            limit = f"{ctx.clip_timeout_s:g} s (--clip-timeout)"
            raise ClipTimeoutError(f"{inputs['clip_id']}: not finished within {limit}") from None
        from gaze.schema.report import Report

        return Report.model_validate(final["report"])
    finally:
        if layout is not None:
            layout.cancel()
        clip_affinity.reset(affinity)
        await close_run(run_id)


GRAPH_LOAD_NICENESS = 19
"""The graph module loads at the lowest priority (``gaze.cpu_priority``): its first node runs a
call later, while the decoding child's windows are wanted by the observers now (a 60 s clip's
last observer request left 0.1-0.2 s sooner; 8 and 30 s clips, decoded by then, unchanged)."""


def _graph_loaded() -> bool:
    return "gaze.graph.graph" in sys.modules


async def _first_requests_out(svc: Any) -> None:
    """In a process that has not loaded the graph module yet, wait until the run's first
    requests are on the wire (``Caller.first_requests_out``), or the work started early has
    ended without one (cached replies, a failure). LangGraph is the largest import of a run: it
    then loads while the first replies are awaited, instead of slowing the event loop that reads
    the first frame and builds the first requests. Later clips of the process do not wait."""
    if not svc.early or _graph_loaded():
        return
    out = asyncio.ensure_future(svc.caller.first_requests_out.wait())
    try:
        await asyncio.wait([out, *svc.early.values()], return_when=asyncio.FIRST_COMPLETED)
    finally:
        out.cancel()


def _load_graph() -> Any:
    from gaze.graph.early import defer_unused_inits, load_early_modules

    load_early_modules()
    defer_unused_inits()
    from gaze.graph.graph import graph

    return graph


async def _stream(
    graph: Any, inputs: dict[str, Any], config: Any, ctx: Any, on_update: ProgressHook | None
) -> dict[str, Any]:
    """The graph's final state, passing node updates and progress notes to ``on_update``."""
    from gaze.graph.state import START_RUN

    final: dict[str, Any] = {}
    async for chunk in graph.astream(
        inputs, config=config, context=ctx, stream_mode=["updates", "values", "custom"]
    ):
        mode, data = chunk
        if mode == "updates" and on_update is not None:
            for node, update in data.items():
                if node != START_RUN:  # internal: it only empties the clip state
                    on_update(node, update or {})
        elif mode == "custom" and on_update is not None:
            on_update("progress_note", data)
        elif mode == "values":
            final = data
    return final


def diagnose(video: str | Path, instruction: str, **kwargs: Any) -> Report:
    """Synchronous ``adiagnose``. Inside a running event loop (a Jupyter notebook, an async
    app) it runs on a thread of its own and blocks until the report is ready; ``await
    adiagnose(...)`` there lets the loop go on meanwhile."""

    def run() -> Report:  # the coroutine is made where it runs: none is left un-awaited
        return asyncio.run(adiagnose(video, instruction, **kwargs))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    with ThreadPoolExecutor(1, thread_name_prefix="gaze-diagnose") as pool:
        return pool.submit(run).result()
