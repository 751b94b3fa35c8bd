"""``scripted:unruly``: a scripted backbone that answers the way real vision-language models do.

Its replies are shaped by the request's schema (so they are about the right thing) and then
spoiled in the ways real models spoil them: prose or markdown around the JSON, a truncated
reply, a refusal, severity as a word, a type name in Title Case or not in the codebook, times
outside the segment or the clip, an end before its start, the wrong number of items, a score
out of range, an empty list where items were due. Like real models, it usually mends its answer
when the error is fed back (the retry carries the complaint). Every misbehaviour is chosen by
role and call count, so a test can say exactly what it saw.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from gaze.models.protocol import ModelReply, ModelRequest
from gaze.models.scripted import minimal_instance

CASES = {
    "grounding": ("truncated, then mended", "prose around the JSON"),
    "observer": ("fenced markdown with prose", "empty lists where items were due"),
    "router": ("relevance out of range, then mended", "one dimension scored twice"),
    "specialist": (
        "spans outside the clip, an end before its start, severity as a word, Title Case type",
        "a refusal, then a valid answer",
        "an unknown type name, then an empty list",
    ),
    "critic": ("verdicts for only some hypotheses, an index out of range",),
    "judge": ("a bare 'Score: 4/5' in prose",),
    "progress": ("every other frame only, times named",),
}
"""What ``scripted:unruly`` does per role, cycling with each new call (retries excluded)."""


def _text(request: ModelRequest) -> str:
    return "\n".join(getattr(p, "text", "") for m in request.messages for p in m.parts)


def _is_retry(request: ModelRequest) -> bool:
    return any(m.role == "assistant" for m in request.messages)


def _segment_span(request: ModelRequest) -> tuple[float, float]:
    match = re.search(r"seg\d+ \(([\d.]+)-([\d.]+) s", _text(request))
    return (float(match[1]), float(match[2])) if match else (0.0, 1.0)


def _type_names(request: ModelRequest) -> list[str]:
    defs = (request.json_schema or {}).get("$defs", {})
    for name, schema in defs.items():
        if name.startswith("Hypothesis_"):
            return list(schema["properties"]["type"]["enum"])
    return []


class UnrulyBackbone:
    """The ``scripted:unruly`` backbone; ``requests`` keeps every request received."""

    provider = "scripted"
    model = "unruly"
    native_json_schema = True

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []
        self._calls: Counter[str] = Counter()

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        retry = _is_retry(request)
        if not retry:
            self._calls[request.role] += 1
        case = (self._calls[request.role] - 1) % len(CASES.get(request.role, ("",)))
        handler = getattr(self, f"_{request.role}", None)
        reply = handler(request, case, retry) if handler else self._plain(request)
        if isinstance(reply, ModelReply):
            return reply
        tokens_in, tokens_out = len(_text(request)) // 4, len(reply) // 4
        return ModelReply(reply, input_tokens=tokens_in, output_tokens=tokens_out)

    def _plain(self, request: ModelRequest) -> str:
        return json.dumps(minimal_instance(request.json_schema or {}))

    def _grounding(self, request: ModelRequest, case: int, retry: bool) -> str:
        if request.schema_name == "TaskMemory":
            body = {
                "objective": "carry out the instruction",
                "subtasks": [
                    {
                        "id": "s1",
                        "description": "reach and grasp the object",
                        "objects": ["object"],
                        "target_state": "grasped",
                        "expected_outcome": "object in the gripper",
                        "completion_criterion": "object lifted",
                    }
                ],
            }
        else:
            body = minimal_instance(request.json_schema or {})
        text = json.dumps(body)
        if case == 0 and not retry:
            return text[: len(text) // 2]  # cut off mid-way, as a reply at max_tokens is
        return f"Here is the analysis you asked for:\n{text}\nLet me know if you need more."

    def _observer(self, request: ModelRequest, case: int, retry: bool) -> str:
        times = [float(t) for t in re.findall(r"t=(\d+(?:\.\d+)?)s", _text(request))]
        if case == 1:
            return json.dumps({"summary": "", "subtask_status": [], "notable": []})
        body = {
            "summary": "the arm moves toward the object",
            "subtask_status": [{"subtask_id": "s1", "status": "in_progress", "times_s": times[:2]}],
            "notable": [],
        }
        return f"Sure! Below is my observation.\n```json\n{json.dumps(body, indent=2)}\n```"

    def _router(self, request: ModelRequest, case: int, retry: bool) -> str:
        scores = [
            {"dimension": "physical_plausibility", "relevance": 0.9, "reason": "motion"},
            {"dimension": "visual_quality", "relevance": 0.4, "reason": "frames"},
        ]
        if case == 0 and not retry:
            scores[0]["relevance"] = 1.3  # out of the 0-1 range the schema states
        if case == 1:
            scores.append({"dimension": "visual_quality", "relevance": 0.7, "reason": "again"})
        return json.dumps({"scores": scores})

    def _specialist(self, request: ModelRequest, case: int, retry: bool) -> str | ModelReply:
        start, end = _segment_span(request)
        names = _type_names(request)
        if not names:  # not the graph's specialist (a baseline asking in its own schema)
            return self._plain(request)
        if case == 1 and not retry:
            return ModelReply("", refusal="I can't help with analysing this video.")
        if case == 2:
            if retry:
                return json.dumps({"hypotheses": []})
            names = ["object_levitation"]
        if case != 0 and not (case == 1 and retry):
            return self._hypotheses(names[0], start + 0.5, start + 1.0, 3)
        first = names[0]
        hypotheses = [
            {  # far outside the clip
                "type": first,
                "start_s": 500.0,
                "end_s": 900.0,
                "explanation": "the object drifts",
                "evidence": ["t=500s"],
                "objects": ["object"],
                "severity": 3,
                "confidence": 0.8,
            },
            {  # end before start
                "type": first,
                "start_s": start + 1.0,
                "end_s": start + 0.5,
                "explanation": "a glitch",
                "evidence": [],
                "objects": [],
                "severity": 2,
                "confidence": 0.6,
            },
            {  # severity as a word, the type in Title Case: mendable
                "type": first.replace("_", " ").title(),
                "start_s": start + 0.25,
                "end_s": min(end, start + 1.25),
                "explanation": "the object jumps between frames",
                "evidence": [f"t={start + 0.25:.2f}s"],
                "objects": ["object"],
                "severity": "severe",
                "confidence": 0.9,
            },
        ]
        return "Analysis:\n" + json.dumps({"hypotheses": hypotheses})

    @staticmethod
    def _hypotheses(kind: str, start: float, end: float, severity: int) -> str:
        return json.dumps(
            {
                "hypotheses": [
                    {
                        "type": kind,
                        "start_s": start,
                        "end_s": end,
                        "explanation": "odd motion",
                        "evidence": [],
                        "objects": [],
                        "severity": severity,
                        "confidence": 0.7,
                    }
                ]
            }
        )

    def _critic(self, request: ModelRequest, case: int, retry: bool) -> str:
        count = len(re.findall(r"^\[(\d+)\]", _text(request), re.MULTILINE))
        verdicts = [
            {"index": i, "decision": "accept", "reason": "visible", "confidence": 0.8}
            for i in range(0, count, 2)  # every other one: the rest get no verdict
        ]
        verdicts.append({"index": count + 5, "decision": "accept", "reason": "?", "confidence": 1})
        return json.dumps({"verdicts": verdicts})

    def _judge(self, request: ModelRequest, case: int, retry: bool) -> str:
        return "The robot looks plausible overall. Score: 4/5"

    def _progress(self, request: ModelRequest, case: int, retry: bool) -> str:
        listed = re.search(r"as\s+labelled:\s+([\d,\s]+)\)", _text(request))
        times = [int(t) for t in listed[1].replace(",", " ").split()] if listed else [0]
        frames = [{"time_s": t, "progress": 10.0 * t} for t in times[::2]]
        return json.dumps({"frames": frames})
