"""Dimension specialists: failure hypotheses of a segment's routed dimensions, in one call.

One request per segment covers every dimension the router chose for it (the frames are sent
once, not once per dimension), and its answer holds one structured part per dimension. Each
part's schema is built per dimension, so its type field can only name that dimension's types;
spans are clamped to the segment before they leave this module."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from gaze.agents.common import VideoCut, as_text, frames_then_task, span_text
from gaze.models.caller import Caller
from gaze.models.structured import Structured, ask, extract_json
from gaze.prompts import load_prompt
from gaze.prompts.codebook_text import severity_rubric, type_catalogue
from gaze.schema.codebook import load_codebook
from gaze.schema.dimensions import DimensionName
from gaze.schema.records import Hypothesis, SceneMemoryRecord, TaskMemoryRecord

PIXEL_HINT_DIMENSIONS = frozenset({"physical_plausibility", "visual_quality"})


class HypothesisBase(BaseModel):
    """Fields every hypothesis has; ``type`` is added per dimension."""

    model_config = ConfigDict(extra="forbid")
    start_s: float = Field(ge=0)
    end_s: float = Field(ge=0)
    explanation: str
    evidence: list[str]
    objects: list[str]
    severity: int = Field(ge=1, le=5)
    confidence: float = Field(ge=0, le=1)


@cache
def output_model(dimension: str) -> type[BaseModel]:
    """``{"hypotheses": [...]}`` whose ``type`` is a Literal of the dimension's types."""
    names = tuple(t.name for t in load_codebook().codebook.dimension(dimension).types)
    type_field: Any = Literal[names]  # built at run time from the codebook
    hypothesis: Any = create_model(
        f"Hypothesis_{dimension}", __base__=HypothesisBase, type=(type_field, ...)
    )
    return create_model(
        f"Specialist_{dimension}",
        __config__=ConfigDict(extra="forbid"),
        hypotheses=(list[hypothesis], ...),
    )


@cache
def segment_model(dimensions: tuple[str, ...]) -> type[BaseModel]:
    """``{dimension: {"hypotheses": [...]}, ...}``: one part per routed dimension, in order."""
    fields: Any = {d: (output_model(d), ...) for d in dimensions}
    return create_model(
        "Specialists_" + "__".join(dimensions), __config__=ConfigDict(extra="forbid"), **fields
    )


SEVERITY_WORDS = {"cosmetic": 1, "minor": 2, "moderate": 3, "severe": 4, "catastrophic": 5}
"""The codebook rubric's names for severities 1-5 (models often write the word)."""


def mend(data: Any, type_names: Sequence[str]) -> Any:
    """Repairs whose intent is clear, before validation: a severity written as its rubric word
    (or as a numeric string), a type name in another case or with spaces or hyphens. Anything
    else (an unknown type, a severity out of range) is left for validation to refuse."""
    if not isinstance(data, dict) or not isinstance(data.get("hypotheses"), list):
        return data
    canonical = {name.replace("_", ""): name for name in type_names}
    for item in data["hypotheses"]:
        if not isinstance(item, dict):
            continue
        severity = item.get("severity")
        if isinstance(severity, str):
            word = severity.strip().lower()
            if word in SEVERITY_WORDS:
                item["severity"] = SEVERITY_WORDS[word]
            elif word.isdigit():
                item["severity"] = int(word)
        kind = item.get("type")
        if isinstance(kind, str):
            key = re.sub(r"[\s_\-]+", "", kind.strip().lower())
            item["type"] = canonical.get(key, kind)
    return data


def mend_segment(data: Any, dimensions: Sequence[str]) -> Any:
    """``mend`` on each dimension's part; an answer for a single dimension given without its
    key (``{"hypotheses": [...]}``) is put under it."""
    if isinstance(data, dict) and len(dimensions) == 1 and set(data) == {"hypotheses"}:
        data = {dimensions[0]: data}
    if not isinstance(data, dict):
        return data
    book = load_codebook().codebook
    for dimension in dimensions:
        if dimension in data:  # a part left out is for validation to name
            names = [t.name for t in book.dimension(dimension).types]
            data[dimension] = mend(data[dimension], names)
    return data


SPAN_TOLERANCE_S = 0.25
"""How far a span may reach past its segment (one sampling interval at 4 fps) and still be
read as a claim about the frames the specialist saw."""


def to_hypotheses(
    output: BaseModel, dimension: DimensionName, segment: Mapping[str, Any], clip_end_s: float
) -> tuple[list[Hypothesis], list[str]]:
    """(hypotheses, problems). A span that ends before it starts, or lies outside the segment
    or the clip, is rejected and named in the problems, never clamped into an event the model
    did not describe; a span reaching a little past the segment (``SPAN_TOLERANCE_S``) is
    trimmed to what was shown."""
    out: list[Hypothesis] = []
    problems: list[str] = []
    lo = float(segment["start_s"])
    hi = min(float(segment["end_s"]), clip_end_s)
    for i, h in enumerate(getattr(output, "hypotheses", [])):
        start, end = float(h.start_s), float(h.end_s)
        where = f"{segment['id']}/{dimension} hypothesis {i} ({h.type} {start:g}-{end:g} s)"
        if end < start:
            problems.append(f"{where}: ends before it starts; dropped")
            continue
        if start > hi + SPAN_TOLERANCE_S or end < lo - SPAN_TOLERANCE_S:
            outside = "the clip" if start >= clip_end_s else f"its segment ({lo:g}-{hi:g} s)"
            problems.append(f"{where}: lies outside {outside}; dropped")
            continue
        out.append(
            Hypothesis(
                id=f"{segment['id']}:{dimension}:{i}",
                segment_id=str(segment["id"]),
                dimension=dimension,
                type=h.type,
                start_s=round(max(start, lo), 6),
                end_s=round(min(end, hi), 6),
                explanation=h.explanation,
                evidence=list(h.evidence),
                objects=list(h.objects),
                severity=int(h.severity),
                confidence=float(h.confidence),
                source="specialist",
            )
        )
    return out, problems


def dimensions_text(dimensions: Sequence[str]) -> str:
    """Each routed dimension's description and type catalogue, in routing order."""
    book = load_codebook().codebook
    return "\n\n".join(
        f"Dimension {d}: {book.dimension(d).description}\nFailure types of {d}:\n"
        + type_catalogue(d)
        for d in dimensions
    )


async def examine(
    caller: Caller,
    *,
    dimensions: Sequence[str],
    instruction: str,
    segment: Mapping[str, Any],
    frames: Sequence[tuple[float, bytes]],
    task_memory: TaskMemoryRecord | None,
    scene_memory: SceneMemoryRecord | None,
    observations: str,
    pixel_hints: str,
    max_retries: int,
    video_windows: VideoCut | None = None,
) -> Structured[Any]:
    """One call for the segment's routed ``dimensions``: its answer has a part per dimension."""
    prompt = load_prompt("specialist")
    where = f"{segment['id']} ({span_text(segment['start_s'], segment['end_s'])})"
    hinted = [d for d in dimensions if d in PIXEL_HINT_DIMENSIONS]
    hints = f"(for {', '.join(hinted)})\n{pixel_hints}" if hinted else "(none for these dimensions)"
    text = prompt.render(
        dimension_names=", ".join(dimensions),
        dimensions=dimensions_text(dimensions),
        severity_rubric=severity_rubric(),
        instruction=instruction,
        task_memory=as_text(task_memory),
        scene_memory=as_text(scene_memory),
        segment=where,
        observations=observations,
        pixel_hints=hints,
    )
    messages = frames_then_task(frames, text, video_windows)
    output = segment_model(tuple(dimensions))
    return await ask(
        caller,
        "specialist",
        messages,
        output,
        max_retries=max_retries,
        parse=lambda reply: output.model_validate(mend_segment(extract_json(reply), dimensions)),
        label=f"{', '.join(dimensions)} · {where}",
    )
