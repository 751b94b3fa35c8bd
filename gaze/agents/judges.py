"""The PA/IA judge and the progress judge (DESIGN section 7).

PA sees only the video; IA sees instruction, initial frame and video; up to 32 frames at 4 fps;
reasoning first, then the integer score and three 0-2 sub-scores. Replies are parsed leniently
when a provider cannot enforce the schema: fenced JSON, text around it, "4/5", "score: 4", or a
bare number. Progress: sequence style (frames at 1 fps, chunks of at most 32, the previous
chunk's last estimate as context) or pair style (adjacent frames -> signed change).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import cache
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, conlist, create_model

from gaze.agents.common import frame_parts, subsample
from gaze.agents.judge_limits import MAX_JUDGE_FRAMES, MAX_PROGRESS_CHUNK
from gaze.models.caller import Caller, CallRecord
from gaze.models.protocol import Message
from gaze.models.settle import all_settled
from gaze.models.structured import Structured, ask, extract_json
from gaze.prompts import load_prompt
from gaze.schema.report import JudgeScore

T = TypeVar("T")


class PAJudgement(BaseModel):
    """Physical adherence: reasoning, three 0-2 sub-scores, score 1-5."""

    model_config = ConfigDict(extra="forbid")
    reasoning: str
    agent_consistency: int = Field(ge=0, le=2)
    scene_consistency: int = Field(ge=0, le=2)
    interaction_realism: int = Field(ge=0, le=2)
    score: int = Field(ge=1, le=5)


class IAJudgement(BaseModel):
    """Instruction alignment: reasoning, three 0-2 sub-scores, score 1-5."""

    model_config = ConfigDict(extra="forbid")
    reasoning: str
    agent_match: int = Field(ge=0, le=2)
    object_correct: int = Field(ge=0, le=2)
    goal_completed: int = Field(ge=0, le=2)
    score: int = Field(ge=1, le=5)


_SCORE_PATTERNS = (
    re.compile(r"\b([1-5])\s*/\s*5\b"),
    re.compile(r"(?:score|rating)\W{0,5}(?:is|of|=|:)?\W{0,3}([1-5])\b", re.IGNORECASE),
    re.compile(r"^\W*([1-5])\W*$"),
)


def lenient_score(text: str) -> JudgeScore:
    """A 1-5 score from whatever the model wrote: JSON (fenced or not, with text around), a
    fraction like "4/5", "score: 4", or a bare number. Raises ValueError when none is there."""
    try:
        data = extract_json(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and "score" in data:
        subscores = {
            k: int(v)
            for k, v in data.items()
            if k not in ("score", "reasoning")
            and isinstance(v, int | float)
            and not isinstance(v, bool)
            and 0 <= v <= 2
        }
        score = int(round(float(data["score"])))
        if not 1 <= score <= 5:
            raise ValueError(f"score {data['score']} is outside 1-5")
        return JudgeScore(
            score=score, rationale=str(data.get("reasoning", "")), subscores=subscores
        )
    for pattern in _SCORE_PATTERNS:
        match = pattern.search(text.strip())
        if match:
            return JudgeScore(score=int(match[1]), rationale=text.strip())
    raise ValueError("no 1-5 score found in the reply")


async def judge_axis(
    caller: Caller,
    axis: str,
    instruction: str,
    frames: Sequence[tuple[float, bytes]],
    initial: tuple[float, bytes],
    max_retries: int,
) -> tuple[JudgeScore | None, list[CallRecord], str]:
    frames = subsample(frames, MAX_JUDGE_FRAMES)
    note = f"{len(frames)} frames, in time order, each labelled with its time in seconds."
    if axis == "pa":
        text = load_prompt("judge_pa").render(frames_note=note)
        messages = [Message.text("system", text), frame_parts(frames, "Video frames:")]
        output: type[BaseModel] = PAJudgement
    else:
        text = load_prompt("judge_ia").render(instruction=instruction, frames_note=note)
        messages = [
            Message.text("system", text),
            frame_parts([initial], "Initial scene:"),
            frame_parts(frames, "Video frames:"),
        ]
        output = IAJudgement
    result = await ask(
        caller,
        "judge",
        messages,
        output,
        max_retries=max_retries,
        parse=lenient_score,
        label=axis,
    )
    return _as_score(result), result.records, result.error


def _as_score(result: Structured[Any]) -> JudgeScore | None:
    value = result.value
    if value is None:
        return None
    if isinstance(value, JudgeScore):
        return value
    data = value.model_dump()
    return JudgeScore(score=data.pop("score"), rationale=data.pop("reasoning"), subscores=data)


class FrameProgress(BaseModel):
    """Progress at one labelled frame."""

    model_config = ConfigDict(extra="forbid")
    time_s: float
    progress: float = Field(ge=0, le=100)


@cache
def progress_chunk_model(count: int) -> type[BaseModel]:
    """``{"frames": [{time_s, progress}, ...]}`` with exactly ``count`` items: the schema itself
    fixes how many values come back (min and max items)."""
    items: Any = conlist(FrameProgress, min_length=count, max_length=count)
    return create_model(
        f"ProgressChunk{count}", __config__=ConfigDict(extra="forbid"), frames=(items, ...)
    )


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError(f"progress value {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"progress value {value!r} is not finite")
    return number


def read_progress(text: str, times: Sequence[float]) -> list[float]:
    """One progress value per frame time from a reply. A reply with the wrong number of items
    is repaired when its intent is clear: items that name their frame times are resampled to
    the frames shown (nearest named time); a bare list of the wrong length is refused."""
    data = extract_json(text)
    items = data.get("frames", data.get("progress")) if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise ValueError(f"expected a list of {len(times)} frame progress values")
    if all(isinstance(i, dict) for i in items):
        try:
            named = sorted((_number(i["time_s"]), _number(i["progress"])) for i in items)
        except KeyError as exc:
            raise ValueError(f"each frame item needs time_s and progress (missing {exc})") from None
        if len(named) == len(times):
            return [v for _, v in named]
        return [_nearest(named, t)[1] for t in times]
    values = [_number(i) for i in items]
    if len(values) != len(times):
        raise ValueError(f"expected {len(times)} progress values, got {len(values)}")
    return values


class ProgressChange(BaseModel):
    """Signed progress change between two frames, -100..100."""

    model_config = ConfigDict(extra="forbid")
    change: float = Field(ge=-100, le=100)


def one_per_second(frames: Sequence[tuple[float, bytes]]) -> list[tuple[float, bytes]]:
    """The sampled frame nearest each whole second."""
    if not frames:
        return []
    return [_nearest(frames, second) for second in range(int(frames[-1][0]) + 1)]


def _nearest(items: Sequence[tuple[float, T]], t: float) -> tuple[float, T]:
    """The item whose time is nearest ``t`` (the first of equally near ones)."""
    return min(items, key=lambda item: abs(item[0] - t))


async def progress_sequence(
    caller: Caller, instruction: str, frames: Sequence[tuple[float, bytes]], max_retries: int
) -> tuple[list[float] | None, list[CallRecord], str]:
    values: list[float] = []
    records: list[CallRecord] = []
    previous = "none (this is the start of the video)"
    for start in range(0, len(frames), MAX_PROGRESS_CHUNK):
        chunk = list(frames[start : start + MAX_PROGRESS_CHUNK])
        times = [t for t, _ in chunk]
        text = load_prompt("progress_sequence").render(
            instruction=instruction,
            previous=previous,
            count=len(chunk),
            times=", ".join(f"{t:.0f}" for t in times),
        )
        result: Structured[Any] = await ask(
            caller,
            "progress",
            [Message.text("system", text), frame_parts(chunk, "Frames:")],
            progress_chunk_model(len(chunk)),
            max_retries=max_retries,
            parse=lambda reply, times=times: read_progress(reply, times),  # type: ignore[misc]
            label=f"frames at {times[0]:.1f}-{times[-1]:.1f} s",
        )
        records += result.records
        if result.value is None:
            return None, records, result.error
        values += list(result.value)
        previous = f"{values[-1]:g} at t={chunk[-1][0]:.0f}s"
    return values, records, ""


async def progress_pairs(
    caller: Caller, instruction: str, frames: Sequence[tuple[float, bytes]], max_retries: int
) -> tuple[list[float] | None, list[CallRecord], str]:
    text = load_prompt("progress_pair").render(instruction=instruction)
    calls = [
        ask(
            caller,
            "progress",
            [Message.text("system", text), frame_parts([a, b], "Two consecutive frames:")],
            ProgressChange,
            max_retries=max_retries,
            label=f"{a[0]:.2f} s -> {b[0]:.2f} s",
        )
        for a, b in zip(frames, frames[1:], strict=False)
    ]
    results = await all_settled(*calls)
    records = [r for result in results for r in result.records]
    failed = [r.error for r in results if r.value is None]
    if failed:
        return None, records, failed[0]
    return [0.0, *(r.value.change for r in results if r.value is not None)], records, ""
