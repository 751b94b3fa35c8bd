"""The router: which dimensions each segment's specialist call examines. One call scores every
segment of the clip (the router reads text only: the observations and pixel measurements of
each segment); choosing the top k is a pure function of those scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gaze.agents.common import span_text
from gaze.models.caller import Caller
from gaze.models.protocol import Message
from gaze.models.structured import Structured, ask, extract_json
from gaze.prompts import load_prompt
from gaze.prompts.codebook_text import dimension_list
from gaze.schema.dimensions import DIMENSIONS, DimensionName


class DimensionScore(BaseModel):
    """How much a dimension deserves a look, 0-1."""

    model_config = ConfigDict(extra="forbid")
    dimension: DimensionName
    relevance: float = Field(ge=0, le=1)
    reason: str


class SegmentScores(BaseModel):
    """Relevance of each dimension for one segment."""

    model_config = ConfigDict(extra="forbid")
    segment_id: str
    scores: list[DimensionScore]


class RouterOutput(BaseModel):
    """Relevance of each dimension for every segment of the clip."""

    model_config = ConfigDict(extra="forbid")
    segments: list[SegmentScores]


def route(scores: Mapping[str, float], top_k: int) -> list[DimensionName]:
    """The ``top_k`` dimensions by relevance; ties (and unscored dimensions, taken as 0) go in
    codebook order, so the choice is deterministic."""
    ranked = sorted(DIMENSIONS, key=lambda d: (-float(scores.get(d, 0.0)), DIMENSIONS.index(d)))
    return ranked[: max(0, min(top_k, len(DIMENSIONS)))]


def scores_of(output: SegmentScores) -> dict[str, float]:
    """Scores by dimension; a dimension scored twice keeps its highest score."""
    out: dict[str, float] = {}
    for item in output.scores:
        out[item.dimension] = max(out.get(item.dimension, 0.0), item.relevance)
    return out


def read_scores(data: Any, segment_ids: Sequence[str]) -> RouterOutput:
    """The answer, validated, with exactly one entry per segment of ``segment_ids``, in order.
    A lone segment's scores given without their segment (``{"scores": [...]}``) are put under
    it. A segment the answer leaves out is scored with nothing, as an empty list of scores
    always was (its top k are then taken in codebook order); scores for a segment the clip does
    not have, and a segment's second entry, are dropped."""
    if isinstance(data, dict) and set(data) == {"scores"} and len(segment_ids) == 1:
        data = {"segments": [{"segment_id": segment_ids[0], "scores": data["scores"]}]}
    output = RouterOutput.model_validate(data)
    given: dict[str, SegmentScores] = {}
    for entry in output.segments:
        given.setdefault(entry.segment_id, entry)
    return RouterOutput(
        segments=[given.get(i) or SegmentScores(segment_id=i, scores=[]) for i in segment_ids]
    )


async def score_segments(
    caller: Caller,
    instruction: str,
    segments: Sequence[tuple[Mapping[str, Any], str]],
    max_retries: int,
) -> Structured[RouterOutput]:
    """One call scoring every segment: ``segments`` pairs each segment with its text (the
    observations of its windows and the pixel measurements in it)."""
    prompt = load_prompt("router")
    blocks = []
    for segment, observations in segments:
        where = f"{segment['id']} ({span_text(segment['start_s'], segment['end_s'])}" + (
            f", subtask {segment['subtask_id']})" if segment.get("subtask_id") else ")"
        )
        blocks.append(f"Segment {where}\n{observations}")
    ids = [str(segment["id"]) for segment, _ in segments]
    text = prompt.render(
        instruction=instruction,
        segments="\n\n".join(blocks),
        dimensions=dimension_list(),
    )
    messages = [Message.text("system", text), Message.text("user", "Score every segment.")]
    return await ask(
        caller,
        "router",
        messages,
        RouterOutput,
        max_retries=max_retries,
        parse=lambda reply: read_scores(extract_json(reply), ids),
        label=f"{len(ids)} segments",
    )
