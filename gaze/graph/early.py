"""Work that starts before the graph does.

The grounding call (one for both memories) depends only on the instruction and the initial
scene, and it begins every clip's critical path; decoding and the pixel pass depend only on the
video, each observer call only on its windows' frames and the task memory, and the router call only
on the observations, the task memory and the pixel evidence. ``gaze.diagnose`` starts the
decoding before the SDK clients are built and the rest as soon as the run's services exist --
while the graph module (LangGraph and its dependencies, the largest import of a run) is still
loading, which a long clip's observers can outlast -- and the nodes take the results instead of
doing the work again. A graph run nobody prepared (LangGraph Studio) does the same work in its
nodes. Nothing here imports LangGraph.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gaze.agents import grounding
from gaze.errors import GazeInputError
from gaze.graph.observing import observe_windows, window_ref
from gaze.graph.segment_texts import router_texts
from gaze.graph.segments import clip_segments
from gaze.graph.services import RunServices
from gaze.graph.state import EventRecord, Segment, TaskMemoryRecord
from gaze.lazy import defer_package_init
from gaze.models.structured import Structured
from gaze.schema.records import record_of
from gaze.settings.context import GazeContext, diagnosing, wants_pixels
from gaze.video.frames import encode_jpeg, resize_max_side

if TYPE_CHECKING:  # the router's module loads the codebook: not before the first request
    from gaze.agents.router import RouterOutput

MemoryKind = Literal["task", "scene"]


ROUTER_MODULE = "gaze.agents.router"


def load_early_modules() -> None:
    """Import what the work started early still needs, now: call it in the worker thread that
    loads the graph, before the graph. The decoded clip's module (OpenCV, NumPy): the clip's
    last message needs it to be read, and one that came while the graph module loaded waited
    for the whole of that import (0.2 s more before a 60 s clip's last observer could start).
    The router's module (the codebook): ``route_early`` imports it once the observers have
    answered, and when the graph's import held a module it shares, the router call waited
    for that thread, which gives way to everything else (``gaze.api.GRAPH_LOAD_NICENESS``)."""
    import gaze.video.clip  # noqa: F401

    importlib.import_module(ROUTER_MODULE)


DEFERRED_PACKAGES = ("langsmith.types", "langgraph_sdk")
"""Loaded with their ``__init__`` deferred (``gaze.lazy.defer_package_init``): LangGraph's
import reaches one enum in ``langsmith.types``, whose ``__init__`` imports about 160 generated
pydantic models (0.25-0.3 s of CPU), and one protocol in ``langgraph_sdk.auth.types``, whose
top package's ``__init__`` imports the SDK's HTTP client (about 0.07 s): together about a third
of the graph's import, on the cores a long clip's decoding wants. Anything that reads either
package for more runs its ``__init__`` then."""


def defer_unused_inits() -> None:
    """Defer ``DEFERRED_PACKAGES``' ``__init__`` before the graph module imports LangGraph: call
    it in the worker thread that loads the graph (a package imported already stays as it is)."""
    for package in DEFERRED_PACKAGES:
        defer_package_init(package)


def wants_memory(ctx: GazeContext, kind: MemoryKind) -> bool:
    """Whether a run asks for this memory at all."""
    return diagnosing(ctx) and bool(getattr(ctx, f"use_{kind}_memory"))


def grounding_kind(ctx: GazeContext) -> grounding.GroundingKind | None:
    """What the run's one grounding call gives: both memories, one, or no call at all."""
    task, scene = wants_memory(ctx, "task"), wants_memory(ctx, "scene")
    if task and scene:
        return "both"
    return "task" if task else "scene" if scene else None


def _read_image(path: str, max_side: int) -> bytes:
    import cv2  # only for a given initial frame: a clip's first frame comes from its decoder

    image = cv2.imread(path)
    if image is None:
        raise GazeInputError(f"initial frame {path} is not an image gaze can read")
    return encode_jpeg(resize_max_side(image, max_side))


async def initial_scene(inputs: Mapping[str, Any], svc: RunServices) -> tuple[float, bytes]:
    """The initial scene: the given image, or the clip's first frame (read on its own, so
    grounding starts before the whole clip is decoded)."""
    scene = inputs.get("initial_frame")
    if scene:
        return 0.0, await asyncio.to_thread(_read_image, scene, svc.sampling.max_side)
    return 0.0, await svc.clips.first_frame(inputs["video"])


async def ground(
    kind: grounding.GroundingKind, inputs: Mapping[str, Any], svc: RunServices, ctx: GazeContext
) -> Structured[Any]:
    """The grounding call: the memories ``kind`` names, from the instruction and the initial
    scene."""
    scene = await initial_scene(inputs, svc)
    return await grounding.ground(svc.caller, kind, inputs["instruction"], scene, ctx.max_retries)


def start_early(
    inputs: Mapping[str, Any], svc: RunServices, ctx: GazeContext
) -> asyncio.Future[GazeContext]:
    """Start the run's grounding call and observers now; the nodes collect them. The caller
    has started the clip's decoding (and pixel pass) with the run's store, before the SDK
    clients were built (``gaze.api``). The observers start once the layout the servers take is
    known (``gaze.settings.served_layout``), which the returned future gives: the graph runs
    with that context."""
    kind = grounding_kind(ctx)
    if kind is not None:
        svc.early["grounding"] = asyncio.ensure_future(ground(kind, inputs, svc, ctx))
    grounding_call = svc.early.get("grounding")
    layout = asyncio.ensure_future(svc.fit(ctx, grounding_call))
    if diagnosing(ctx):
        call = grounding_call if wants_memory(ctx, "task") else None

        async def observe() -> Any:
            fitted = await asyncio.shield(layout)
            instruction, video = inputs["instruction"], inputs["video"]
            return await observe_windows(svc, fitted, instruction, video, task_memory_of(call))

        observing = svc.early["observe"] = asyncio.ensure_future(observe())
        svc.early["route"] = asyncio.ensure_future(
            route_early(inputs, svc, layout, observing, call)
        )
    return layout


async def task_memory_of(call: asyncio.Future[Any] | None) -> TaskMemoryRecord | None:
    """The task memory the grounding call gave, as the ``ground_task`` node records it."""
    if call is None:
        return None
    result: Structured[Any] = await asyncio.shield(call)
    memory = grounding.memory_of(result.value, "task")
    return record_of(memory, TaskMemoryRecord) if memory is not None else None


async def grounded(
    inputs: Mapping[str, Any], svc: RunServices, ctx: GazeContext
) -> tuple[grounding.GroundingKind, Structured[Any]]:
    """The run's grounding call and what it gives: the call started early, else one started by
    whichever grounding node asks first (both nodes read the one call)."""
    kind = grounding_kind(ctx)
    assert kind is not None  # a node asks only when its memory is wanted
    call = svc.early.get("grounding")
    if call is None:
        call = svc.early["grounding"] = asyncio.ensure_future(ground(kind, inputs, svc, ctx))
    result: Structured[Any] = await asyncio.shield(call)
    return kind, result


async def pixel_event_records(svc: RunServices, ctx: GazeContext, video: str) -> list[EventRecord]:
    """The pixel events the specialists and the critic are given: none when the run takes no
    pixel evidence, or takes it for the report alone."""
    if not wants_pixels(ctx):
        return []
    _, events = await svc.clips.pixel_evidence(video)
    if not (diagnosing(ctx) and ctx.pixel_hints):
        return []
    return [record_of(e, EventRecord) for e in events]


@dataclass(frozen=True)
class RouterCall:
    """A router call made before the graph reached its ``route`` node, and what it asked."""

    texts: list[tuple[Segment, str]]
    """Each segment with the text it was scored by (``gaze.graph.segment_texts``)."""
    result: Structured[RouterOutput]


async def route_early(
    inputs: Mapping[str, Any],
    svc: RunServices,
    layout: asyncio.Future[GazeContext],
    observing: asyncio.Future[Any],
    grounding_call: asyncio.Future[Any] | None,
) -> RouterCall | None:
    """The router call, from the work started early, as soon as the observers have answered:
    the ``route`` node takes it when it asks what the node would ask. None when the run has no
    router call to make."""
    ctx = await asyncio.shield(layout)
    if not ctx.use_router:
        return None
    video = inputs["video"]
    observed = await asyncio.shield(observing)
    clip = await svc.clips.decoded(video)
    memory = await task_memory_of(grounding_call)
    windows = [window_ref(w) for w in clip.windows]
    segments = clip_segments(windows, observed["observations"], memory, ctx)
    if not segments:
        return None
    events = await pixel_event_records(svc, ctx, video)
    # the router's module loads the codebook (file reads): off the event loop
    router = await asyncio.to_thread(importlib.import_module, ROUTER_MODULE)
    texts = router_texts(segments, observed["observations"], events)
    result = await router.score_segments(svc.caller, inputs["instruction"], texts, ctx.max_retries)
    return RouterCall(texts, result)
