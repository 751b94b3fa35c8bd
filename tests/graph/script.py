"""A scripted world for the graph tests: a backbone whose replies depend on what is asked, so
parallel calls get the right answer whatever order they arrive in."""

from __future__ import annotations

import re
from typing import Any

from gaze.models.protocol import ModelRequest, TextPart
from gaze.models.scripted import ScriptedBackbone


def text_of(request: ModelRequest) -> str:
    return "\n".join(p.text for m in request.messages for p in m.parts if isinstance(p, TextPart))


def segment_span(request: ModelRequest) -> tuple[float, float]:
    match = re.search(r"Segment: seg\d+ \(([\d.]+)-([\d.]+) s", text_of(request))
    assert match, "specialist/critic prompt names its segment"
    return float(match[1]), float(match[2])


def windows_asked(request: ModelRequest) -> list[int]:
    """The windows an observer request shows, in order (its task text names them)."""
    task = request.messages[-1].parts[-1]
    assert isinstance(task, TextPart) and task.text.startswith("Your role: the observer")
    shown = task.text.split("The frames above show ", 1)[1].split(". For each window", 1)[0]
    return [int(i) for i in re.findall(r"window (\d+) \(", shown)]


def segments_scored(request: ModelRequest) -> list[str]:
    """The segment ids a router request asks about, in order."""
    return re.findall(r"^Segment (seg\d+) \(", text_of(request), re.MULTILINE)


def routed(request: ModelRequest) -> list[str]:
    """The dimensions a specialist request covers, in order (its schema's parts)."""
    return list((request.json_schema or {}).get("properties", {}))


class World:
    """Replies for a clip with one real failure at ``truth`` (start, end) seconds."""

    def __init__(self, truth: tuple[float, float], observer_garbage: bool = False) -> None:
        self.truth = truth
        self.observer_garbage = observer_garbage

    def __call__(self, request: ModelRequest) -> Any:
        return getattr(self, request.role)(request)

    def grounding(self, request: ModelRequest) -> Any:
        if request.schema_name == "Grounding":
            return {"task": self.task_memory(), "scene": self.scene_memory()}
        if request.schema_name == "TaskMemory":
            return self.task_memory()
        return self.scene_memory()

    def task_memory(self) -> Any:
        return {
            "objective": "the block ends on the plate",
            "subtasks": [
                {
                    "id": "s1",
                    "description": "grasp the block",
                    "objects": ["block"],
                    "target_state": "block in gripper",
                    "expected_outcome": "block lifted",
                    "completion_criterion": "block above the table",
                },
                {
                    "id": "s2",
                    "description": "place the block on the plate",
                    "objects": ["block", "plate"],
                    "target_state": "block on plate",
                    "expected_outcome": "block rests on plate",
                    "completion_criterion": "gripper open above plate",
                },
            ],
        }

    def scene_memory(self) -> Any:
        return {
            "workspace": "table, fixed side camera",
            "objects": [{"name": "red block", "attributes": "small cube", "location": "left"}],
            "robot_parts": ["one arm", "parallel gripper"],
            "relations": [],
            "uncertainty": [],
        }

    def observer(self, request: ModelRequest) -> Any:
        if self.observer_garbage:
            return "I cannot produce JSON today."
        return {"windows": [self.window(w) for w in windows_asked(request)]}

    @staticmethod
    def window(window: int) -> Any:
        status = "in_progress" if window == 0 else "completed"
        return {
            "summary": f"window {window}: the arm works",
            "notable": [],
            "subtask_status": [{"subtask_id": f"s{window + 1}", "status": status, "times_s": []}],
        }

    def router(self, request: ModelRequest) -> Any:
        scores = {
            "physical_plausibility": 0.9,
            "object_scene_consistency": 0.8,
            "visual_quality": 0.3,
            "task_progress": 0.2,
        }
        return {
            "segments": [
                {
                    "segment_id": segment_id,
                    "scores": [
                        {"dimension": d, "relevance": s, "reason": "scripted"}
                        for d, s in scores.items()
                    ],
                }
                for segment_id in segments_scored(request)
            ]
        }

    def specialist(self, request: ModelRequest) -> Any:
        """One part per routed dimension, as the segment's single specialist call asks."""
        return {d: self.dimension_part(request, d) for d in routed(request)}

    def dimension_part(self, request: ModelRequest, dimension: str) -> Any:
        start, end = segment_span(request)
        t0, t1 = self.truth
        if not (start <= t0 <= end):
            return {"hypotheses": []}
        base = {"evidence": [f"t={t0:.2f}s"], "explanation": "", "objects": ["red block"]}
        if dimension == "physical_plausibility":
            return {
                "hypotheses": [
                    {
                        **base,
                        "type": "object_teleportation",
                        "start_s": t0,
                        "end_s": t1,
                        "explanation": "the red block jumps",
                        "severity": 5,
                        "confidence": 0.8,
                    },
                    {
                        **base,
                        "type": "object_floating",
                        "start_s": start,
                        "end_s": start + 0.5,
                        "objects": ["plate"],
                        "explanation": "the plate hovers",
                        "severity": 4,
                        "confidence": 0.6,
                    },
                ]
            }
        if dimension == "object_scene_consistency":
            return {
                "hypotheses": [
                    {
                        **base,
                        "type": "object_disappearance",
                        "start_s": t0,
                        "end_s": t1,
                        "explanation": "the red block vanishes from its place",
                        "severity": 4,
                        "confidence": 0.7,
                    }
                ]
            }
        return {"hypotheses": []}

    def critic(self, request: ModelRequest) -> Any:
        verdicts = []
        for index, kind in re.findall(r"^\[(\d+)\] \w+/(\w+)", text_of(request), re.MULTILINE):
            if kind == "object_floating":
                verdicts.append(
                    {
                        "index": int(index),
                        "decision": "reject",
                        "confidence": 0.2,
                        "reason": "the plate rests on the table; the arm occludes it",
                    }
                )
            else:
                verdicts.append(
                    {
                        "index": int(index),
                        "decision": "accept",
                        "confidence": 0.9,
                        "reason": "visible in the cited frames",
                    }
                )
        return {"verdicts": verdicts}


def scripted_world(truth: tuple[float, float], **kwargs: Any) -> ScriptedBackbone:
    return ScriptedBackbone(World(truth, **kwargs), model="world")
