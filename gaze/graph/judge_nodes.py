"""The optional judge branches: ``pa_ia`` and ``progress`` (they run beside the diagnosis,
from the decoded clip, and join it at the report)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from gaze.agents import judges
from gaze.errors import GazeInputError
from gaze.formats.jsonl import parse_json
from gaze.graph.services import RunServices, services
from gaze.graph.state import Failure, JudgeScoreRecord, State, Update
from gaze.metrics.progress import opd_metrics, process
from gaze.models.settle import all_settled
from gaze.schema.input_rules import default_clip_id
from gaze.schema.records import record_of
from gaze.settings.context import GazeContext
from gaze.video.frames import encode_jpeg
from gaze.video.store import window_frames


async def _frames(
    state: State, svc: RunServices
) -> tuple[list[tuple[float, bytes]], tuple[float, bytes]]:
    clip = await svc.clips.decoded(state["video"])
    frames = window_frames(clip, [w.index for w in clip.windows])
    return frames, (0.0, await asyncio.to_thread(encode_jpeg, clip.initial_frame))


async def pa_ia(state: State, runtime: Runtime[GazeContext]) -> Update:
    """Physical adherence and instruction alignment, 1-5 each with 0-2 sub-scores."""
    ctx = runtime.context
    if "pa_ia" not in ctx.sections:
        return {}
    svc = await services(runtime)
    frames, initial = await _frames(state, svc)
    caller = svc.caller
    (pa, pa_calls, pa_error), (ia, ia_calls, ia_error) = await all_settled(
        judges.judge_axis(caller, "pa", state["instruction"], frames, initial, ctx.max_retries),
        judges.judge_axis(caller, "ia", state["instruction"], frames, initial, ctx.max_retries),
    )
    problems = [
        Failure(role="judge", where=axis, detail=error)
        for axis, value, error in (("pa", pa, pa_error), ("ia", ia, ia_error))
        if value is None
    ]
    return {
        "pa": record_of(pa, JudgeScoreRecord) if pa else None,
        "ia": record_of(ia, JudgeScoreRecord) if ia else None,
        "usage": pa_calls + ia_calls,
        "prompts": ["judge_pa", "judge_ia"],
        "judge_failures": problems,
    }


def recorded_curve(path: str, clip_id: str) -> list[float]:
    """A clip's curve from a JSONL file of recorded curves (read in a worker thread)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise GazeInputError(f"progress_file {path}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row = parse_json(line, f"progress_file {path} line {number}")
        if not isinstance(row, dict):
            raise GazeInputError(f"progress_file {path} line {number}: expected a JSON object")
        if str(row.get("clip_id", row.get("case_id"))) == clip_id:
            return [float(v) for v in row["progress"]]
    raise GazeInputError(f"progress_file {path} has no curve for clip {clip_id!r}")


async def progress(state: State, runtime: Runtime[GazeContext]) -> Update:
    """The task-progress curve (raw and processed) and its OPD metrics."""
    ctx = runtime.context
    if "progress" not in ctx.sections:
        return {}
    svc = await services(runtime)
    frames, _ = await _frames(state, svc)
    per_second = judges.one_per_second(frames)
    kind = "absolute"
    records: list[Any] = []
    error = ""
    if ctx.progress_style == "recorded":
        clip_id = state.get("clip_id") or default_clip_id(state["video"])
        raw: list[float] | None = await asyncio.to_thread(
            recorded_curve, str(ctx.progress_file), clip_id
        )
        prompts: list[str] = []
    elif ctx.progress_style == "pair":
        raw, records, error = await judges.progress_pairs(
            svc.caller, state["instruction"], per_second, ctx.max_retries
        )
        kind = "increments"
        prompts = ["progress_pair"]
    else:
        raw, records, error = await judges.progress_sequence(
            svc.caller, state["instruction"], per_second, ctx.max_retries
        )
        prompts = ["progress_sequence"]
    if not raw:
        return {
            "progress": None,
            "usage": records,
            "prompts": prompts,
            "judge_failures": [
                {"role": "progress", "where": "curve", "detail": error or "empty curve"}
            ],
        }
    processed = process(raw, kind)  # type: ignore[arg-type]
    return {
        "progress": {
            "times_s": [float(i) for i in range(len(raw))],
            "raw": raw,
            "processed": [round(float(x), 6) for x in processed],
            "metrics": opd_metrics(processed),
        },
        "usage": records,
        "prompts": prompts,
    }
