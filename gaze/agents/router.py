"""The router: which dimensions a segment's specialists examine. The model scores relevance;
choosing the top k is a pure function of those scores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gaze.agents.common import span_text
from gaze.models.caller import Caller
from gaze.models.protocol import Message
from gaze.models.structured import Structured, ask
from gaze.prompts import load_prompt
from gaze.prompts.codebook_text import dimension_list
from gaze.schema.codebook import DIMENSIONS, DimensionName


class DimensionScore(BaseModel):
    """How much a dimension deserves a look, 0-1."""

    model_config = ConfigDict(extra="forbid")
    dimension: DimensionName
    relevance: float = Field(ge=0, le=1)
    reason: str


class RouterOutput(BaseModel):
    """Relevance of each dimension for the segment."""

    model_config = ConfigDict(extra="forbid")
    scores: list[DimensionScore]


def route(scores: Mapping[str, float], top_k: int) -> list[DimensionName]:
    """The ``top_k`` dimensions by relevance; ties (and unscored dimensions, taken as 0) go in
    codebook order, so the choice is deterministic."""
    ranked = sorted(DIMENSIONS, key=lambda d: (-float(scores.get(d, 0.0)), DIMENSIONS.index(d)))
    return ranked[: max(0, min(top_k, len(DIMENSIONS)))]


def scores_of(output: RouterOutput) -> dict[str, float]:
    """Scores by dimension; a dimension scored twice keeps its highest score."""
    out: dict[str, float] = {}
    for item in output.scores:
        out[item.dimension] = max(out.get(item.dimension, 0.0), item.relevance)
    return out


async def score_segment(
    caller: Caller,
    instruction: str,
    segment: Mapping[str, Any],
    observations: str,
    max_retries: int,
) -> Structured[RouterOutput]:
    prompt = load_prompt("router")
    where = f"{segment['id']} ({span_text(segment['start_s'], segment['end_s'])}" + (
        f", subtask {segment['subtask_id']})" if segment.get("subtask_id") else ")"
    )
    text = prompt.render(
        instruction=instruction,
        segment=where,
        observations=observations,
        dimensions=dimension_list(),
    )
    messages = [Message.text("system", text), Message.text("user", "Score every dimension.")]
    return await ask(caller, "router", messages, RouterOutput, max_retries=max_retries, label=where)
