"""``build_graph()``: the diagnosis graph, and ``graph``, the compiled graph ``langgraph.json``
names (compiled without a checkpointer: the LangGraph server brings its own).

    START -> start_run (empties the clip state a reused thread kept), then at once
    load_clip (decode: metadata, windows)    and    ground_task, ground_scene
      (two nodes reading one call that gives both memories)
    (or, with no model configured: start_run -> pixel_default -> END, the pixel report)
    load_clip -> pixels (pixel evidence, beside the observers)
    ground_task -> observe (one call per segment's windows, a pair by default, as soon as their
      frames are encoded)
    observe + ground_scene + load_clip -> align -> (+ pixels) route -> specialist
      (one call per segment, for the dimensions routed to it)
      -> critic (verifies specialist and pixel hypotheses, merges) -> review -> report
    load_clip -> pa_ia, progress (optional judge branches) -> review -> report
    (review pauses for a person only when the context's ``review`` is on)

Grounding starts from the first frame alone, beside decoding, so the first model calls do not
wait for the whole clip (DESIGN section 3 draws grounding after load_clip).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from gaze.agents import specialist
from gaze.agents.critic import CriticOutput
from gaze.agents.router import RouterOutput
from gaze.graph import critic_node, judge_nodes, nodes, review_node, specialist_node
from gaze.graph.output_state import OutputState
from gaze.graph.pixel_default import MODEL_ENTRY, PIXEL_ENTRY, entry, pixel_default
from gaze.graph.report_node import report
from gaze.graph.routing import to_specialists
from gaze.graph.state import START_RUN, InputState, SpecialistTask, State
from gaze.models.structured import strict_schema
from gaze.prompts import PROMPT_IDS, load_prompt
from gaze.schema.codebook import load_codebook
from gaze.schema.dimensions import DIMENSIONS
from gaze.settings.context import GazeContext


def _warm_data_files() -> None:
    """Read the codebook and every prompt now, at build time: a node that first read them
    inside a server would block its event loop on file I/O."""
    load_codebook()
    for prompt_id in PROMPT_IDS:
        load_prompt(prompt_id)


def _warm_output_models() -> None:
    """Make the later roles' output models and schemas now, at build time (``gaze.diagnose``
    builds the graph in a worker thread while a clip's first calls are in flight): the first
    specialist call made its dimensions' models with the event loop held, about 3 ms between
    the router's reply and the specialists' requests. A segment's model for the dimensions
    routed to it is still made at its first call, from these (about 1 ms)."""
    for dimension in DIMENSIONS:
        specialist.output_model(dimension)
    for model in (RouterOutput, CriticOutput):
        strict_schema(model)


def build_graph(checkpointer: Any = None) -> Any:
    """The compiled diagnosis graph (pass a checkpointer to step through or resume runs)."""
    _warm_data_files()
    _warm_output_models()
    builder = StateGraph(
        State, context_schema=GazeContext, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("load_clip", nodes.load_clip)
    builder.add_node("pixels", nodes.pixels)
    builder.add_node("ground_task", nodes.ground_task)
    builder.add_node("ground_scene", nodes.ground_scene)
    builder.add_node("observe", nodes.observe)
    builder.add_node("align", nodes.align)
    builder.add_node("route", nodes.route)
    builder.add_node(
        "specialist",
        specialist_node.run_specialist,  # type: ignore[call-overload]
        input_schema=SpecialistTask,
    )
    builder.add_node("critic", critic_node.critic)
    builder.add_node("pa_ia", judge_nodes.pa_ia)
    builder.add_node("progress", judge_nodes.progress)
    builder.add_node("review", review_node.review)
    builder.add_node("report", report)
    builder.add_node(PIXEL_ENTRY, pixel_default)
    builder.add_node(START_RUN, nodes.start_run)

    # every run starts from an empty clip state, whatever a reused thread (Studio) kept
    builder.add_edge(START, START_RUN)
    # no model configured (Studio's default context): the pixel-evidence report, as the CLI's
    builder.add_conditional_edges(START_RUN, entry, [*MODEL_ENTRY, PIXEL_ENTRY])
    builder.add_edge(PIXEL_ENTRY, END)
    builder.add_edge("load_clip", "pixels")
    # the judge branches run beside the diagnosis and join it at the report
    builder.add_edge("load_clip", "pa_ia")
    builder.add_edge("load_clip", "progress")
    # each window's observer starts when its frames are encoded, not when the clip is decoded
    builder.add_edge("ground_task", "observe")
    builder.add_edge(["observe", "ground_scene", "load_clip"], "align")
    builder.add_edge(["align", "pixels"], "route")
    builder.add_conditional_edges("route", to_specialists, ["specialist", "critic"])
    builder.add_edge("specialist", "critic")
    # a person's review, when the context asks for one (a pause; otherwise it passes through)
    builder.add_edge(["critic", "pa_ia", "progress"], "review")
    builder.add_edge("review", "report")
    builder.add_edge("report", END)
    return builder.compile(checkpointer=checkpointer, name="gaze-diagnose")


graph = build_graph()
