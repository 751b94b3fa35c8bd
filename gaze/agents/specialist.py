"""Dimension specialists: failure hypotheses of one dimension in one segment.

The output schema is built per dimension, so the type field can only name that dimension's
types; spans are clamped to the segment before they leave this module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from gaze.agents.common import as_text, frame_parts, span_text
from gaze.models.caller import Caller
from gaze.models.protocol import Message
from gaze.models.structured import Structured, ask
from gaze.prompts import load_prompt
from gaze.prompts.codebook_text import severity_rubric, type_catalogue
from gaze.schema.codebook import load_codebook

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


def to_hypotheses(
    output: BaseModel, dimension: str, segment: Mapping[str, Any], clip_end_s: float
) -> list[dict[str, Any]]:
    """Plain records with spans ordered and clamped to the segment (and the clip)."""
    out = []
    lo, hi = float(segment["start_s"]), min(float(segment["end_s"]), clip_end_s)
    for i, h in enumerate(getattr(output, "hypotheses", [])):
        start, end = sorted((float(h.start_s), float(h.end_s)))
        start, end = min(max(start, lo), hi), min(max(end, lo), hi)
        out.append(
            {
                "id": f"{segment['id']}:{dimension}:{i}",
                "segment_id": segment["id"],
                "dimension": dimension,
                "type": h.type,
                "start_s": round(start, 4),
                "end_s": round(end, 4),
                "explanation": h.explanation,
                "evidence": list(h.evidence),
                "objects": list(h.objects),
                "severity": int(h.severity),
                "confidence": float(h.confidence),
            }
        )
    return out


async def examine(
    caller: Caller,
    *,
    dimension: str,
    instruction: str,
    segment: Mapping[str, Any],
    frames: Sequence[tuple[float, bytes]],
    task_memory: dict[str, Any] | None,
    scene_memory: dict[str, Any] | None,
    observations: str,
    pixel_hints: str,
    max_retries: int,
) -> Structured[Any]:
    prompt = load_prompt("specialist")
    dim = load_codebook().codebook.dimension(dimension)
    where = f"{segment['id']} ({span_text(segment['start_s'], segment['end_s'])})"
    hints = pixel_hints if dimension in PIXEL_HINT_DIMENSIONS else "(none for this dimension)"
    text = prompt.render(
        dimension=dimension,
        dimension_description=dim.description,
        type_catalogue=type_catalogue(dimension),
        severity_rubric=severity_rubric(),
        instruction=instruction,
        task_memory=as_text(task_memory),
        scene_memory=as_text(scene_memory),
        segment=where,
        observations=observations,
        pixel_hints=hints,
    )
    messages = [Message.text("system", text), frame_parts(frames, f"Frames of {where}:")]
    return await ask(
        caller, "specialist", messages, output_model(dimension), max_retries=max_retries
    )
