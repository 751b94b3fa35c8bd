"""``build_graph()``: the diagnosis graph, and ``graph``, the compiled graph ``langgraph.json``
names (compiled without a checkpointer: the LangGraph server brings its own).

    load_clip -> ground_task || ground_scene -> observe (one per window) -> align -> route
      -> specialist (one per segment x routed dimension) -> critic -> report
    load_clip -> pa_ia, progress (optional judge branches) -> report
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from gaze.graph import judge_nodes, nodes
from gaze.graph.context import GazeContext
from gaze.graph.report_node import report
from gaze.graph.routing import to_observers, to_specialists
from gaze.graph.state import InputState, ObserveTask, OutputState, SpecialistTask, State


def build_graph(checkpointer: Any = None) -> Any:
    """The compiled diagnosis graph (pass a checkpointer to step through or resume runs)."""
    builder = StateGraph(
        State, context_schema=GazeContext, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("load_clip", nodes.load_clip)
    builder.add_node("ground_task", nodes.ground_task)
    builder.add_node("ground_scene", nodes.ground_scene)
    builder.add_node(
        "observe",
        nodes.observe,  # type: ignore[call-overload]
        input_schema=ObserveTask,
    )
    builder.add_node("align", nodes.align)
    builder.add_node("route", nodes.route)
    builder.add_node(
        "specialist",
        nodes.run_specialist,  # type: ignore[call-overload]
        input_schema=SpecialistTask,
    )
    builder.add_node("critic", nodes.critic)
    builder.add_node("pa_ia", judge_nodes.pa_ia)
    builder.add_node("progress", judge_nodes.progress)
    builder.add_node("report", report)

    builder.add_edge(START, "load_clip")
    builder.add_edge("load_clip", "ground_task")
    builder.add_edge("load_clip", "ground_scene")
    # the judge branches run beside the diagnosis and join it at the report
    builder.add_edge("load_clip", "pa_ia")
    builder.add_edge("load_clip", "progress")
    # The observer needs the subtasks only; scene memory joins before alignment.
    builder.add_conditional_edges("ground_task", to_observers, ["observe"])
    builder.add_edge(["observe", "ground_scene"], "align")
    builder.add_edge("align", "route")
    builder.add_conditional_edges("route", to_specialists, ["specialist", "critic"])
    builder.add_edge("specialist", "critic")
    builder.add_edge(["critic", "pa_ia", "progress"], "report")
    builder.add_edge("report", END)
    return builder.compile(checkpointer=checkpointer, name="gaze-diagnose")


graph = build_graph()
