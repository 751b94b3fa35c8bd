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
from typing import Any

from gaze.models.protocol import ModelReply, ModelRequest
from gaze.models.scripted import minimal_instance

CASES = {
    "grounding": ("truncated, then mended", "prose around the JSON"),
    "observer": ("fenced markdown with prose", "empty lists where items were due"),
    "router": ("relevance out of range, then mended; one dimension scored twice",),
    "specialist": (
        "a refusal; then spans outside the clip, an end before its start, severity as a word, "
        "Title Case type, and for every other dimension an unknown type name; then the unknown "
        "type mended to an empty list",
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


def _type_names(request: ModelRequest) -> dict[str, list[str]]:
    """Each dimension the specialist request covers, with its type names (its schema's
    ``Hypothesis_<dimension>`` definitions); empty for any other schema."""
    defs = (request.json_schema or {}).get("$defs", {})
    return {
        name.removeprefix("Hypothesis_"): list(schema["properties"]["type"]["enum"])
        for name, schema in defs.items()
        if name.startswith("Hypothesis_")
    }


class UnrulyBackbone:
    """The ``scripted:unruly`` backbone; ``requests`` keeps every request received."""

    provider = "scripted"
    model = "unruly"
    native_json_schema = True

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []
        self._calls: Counter[str] = Counter()
        self._cases: dict[tuple[str, str], int] = {}
        """Each conversation's case, by its first request's text: a retry keeps its call's
        case while other calls of the role go out beside it."""

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        retry = _is_retry(request)
        if not retry:
            self._calls[request.role] += 1
        asked = "\n".join(getattr(p, "text", "") for m in request.messages[:2] for p in m.parts)
        case = self._cases.setdefault(
            (request.role, asked),
            (self._calls[request.role] - 1) % len(CASES.get(request.role, ("",))),
        )
        handler = getattr(self, f"_{request.role}", None)
        reply = handler(request, case, retry) if handler else self._plain(request)
        if isinstance(reply, ModelReply):
            return reply
        tokens_in, tokens_out = len(_text(request)) // 4, len(reply) // 4
        return ModelReply(reply, input_tokens=tokens_in, output_tokens=tokens_out)

    def _plain(self, request: ModelRequest) -> str:
        return json.dumps(minimal_instance(request.json_schema or {}))

    def _grounding(self, request: ModelRequest, case: int, retry: bool) -> str:
        body = minimal_instance(request.json_schema or {})
        if request.schema_name in ("TaskMemory", "Grounding"):
            task = {
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
            body = {**body, "task": task} if request.schema_name == "Grounding" else task
        text = json.dumps(body)
        if case == 0 and not retry:
            return text[: len(text) // 2]  # cut off mid-way, as a reply at max_tokens is
        return f"Here is the analysis you asked for:\n{text}\nLet me know if you need more."

    def _observer(self, request: ModelRequest, case: int, retry: bool) -> str:
        task = _text(request).rsplit("The frames above show ", 1)[-1].split(". For each", 1)[0]
        count = max(1, len(re.findall(r"window \d+ \(", task)))
        times = [float(t) for t in re.findall(r"t=(\d+(?:\.\d+)?)s", _text(request))]
        if case == 1:
            empty = {"summary": "", "subtask_status": [], "notable": []}
            return json.dumps({"windows": [empty] * count})
        body = {
            "summary": "the arm moves toward the object",
            "subtask_status": [{"subtask_id": "s1", "status": "in_progress", "times_s": times[:2]}],
            "notable": [],
        }
        answer = json.dumps({"windows": [body] * count}, indent=2)
        return f"Sure! Below is my observation.\n```json\n{answer}\n```"

    def _router(self, request: ModelRequest, case: int, retry: bool) -> str:
        segments = re.findall(r"^Segment (seg\d+) \(", _text(request), re.MULTILINE)
        answer = []
        for k, segment_id in enumerate(segments):
            scores = [
                {"dimension": "physical_plausibility", "relevance": 0.9, "reason": "motion"},
                {"dimension": "visual_quality", "relevance": 0.4, "reason": "frames"},
                {"dimension": "visual_quality", "relevance": 0.7, "reason": "again"},
            ]
            if k == 0 and not retry:
                scores[0]["relevance"] = 1.3  # out of the 0-1 range the schema states
            answer.append({"segment_id": segment_id, "scores": scores})
        return json.dumps({"segments": answer})

    def _specialist(self, request: ModelRequest, case: int, retry: bool) -> str | ModelReply:
        """One call covers the segment's dimensions, so one conversation shows every way a
        specialist answer goes wrong: first a refusal; then the first dimension's part spoiled
        in ways gaze mends or drops while the others name a type not in the codebook (the whole
        answer is refused); then the unknown types mended."""
        start, end = _segment_span(request)
        dimensions = _type_names(request)
        if not dimensions:  # not the graph's specialist (a baseline asking in its own schema)
            return self._plain(request)
        attempt = sum(m.role == "assistant" for m in request.messages)
        if attempt == 0:
            return ModelReply("", refusal="I can't help with analysing this video.")
        first, *others = dimensions
        body = {first: {"hypotheses": self._spoiled(dimensions[first][0], start, end)}}
        for d in others:
            unknown = [self._hypothesis("object_levitation", start + 0.5, start + 1.0, 3)]
            body[d] = {"hypotheses": unknown if attempt == 1 else []}
        return "Analysis:\n" + json.dumps(body)

    @staticmethod
    def _spoiled(first: str, start: float, end: float) -> list[Any]:
        return [
            {  # far outside the clip
                **UnrulyBackbone._hypothesis(first, 500.0, 900.0, 3),
                "explanation": "the object drifts",
                "evidence": ["t=500s"],
                "objects": ["object"],
                "confidence": 0.8,
            },
            {  # end before start
                **UnrulyBackbone._hypothesis(first, start + 1.0, start + 0.5, 2),
                "explanation": "a glitch",
                "confidence": 0.6,
            },
            {  # severity as a word, the type in Title Case: mendable
                **UnrulyBackbone._hypothesis(
                    first.replace("_", " ").title(), start + 0.25, min(end, start + 1.25), 3
                ),
                "explanation": "the object jumps between frames",
                "evidence": [f"t={start + 0.25:.2f}s"],
                "objects": ["object"],
                "severity": "severe",
                "confidence": 0.9,
            },
        ]

    @staticmethod
    def _hypothesis(kind: str, start: float, end: float, severity: int) -> dict[str, Any]:
        return {
            "type": kind,
            "start_s": start,
            "end_s": end,
            "explanation": "odd motion",
            "evidence": [],
            "objects": [],
            "severity": severity,
            "confidence": 0.7,
        }

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
