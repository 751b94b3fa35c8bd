"""The control methods a user needs to reproduce a comparison (one module, one output schema):

- ``cot``: one call, chain of thought, frames + instruction, type names only;
- ``b1``: one call given everything the graph is told (codebook with definitions and exclusion
  rules, severity rubric, initial scene, admissible normal behaviour);
- ``b2``: b1 with self-consistency: k samples at temperature > 0, events kept when at least half
  of the samples agree (same type, temporal IoU >= 0.5);
- ``b3``: generic propose-then-verify, two calls (cot proposes, a verifier accepts or rejects).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from gaze.agents.common import frame_parts, subsample
from gaze.agents.critic import CriticOutput, temporal_iou, verify
from gaze.models.caller import Caller, CallRecord
from gaze.models.protocol import Message
from gaze.models.settle import all_settled
from gaze.models.structured import ask
from gaze.prompts import load_prompt
from gaze.prompts.codebook_text import severity_rubric, type_catalogue
from gaze.schema.codebook import load_codebook
from gaze.schema.dimensions import DIMENSIONS
from gaze.schema.events import Event
from gaze.settings.caller import sampling_of
from gaze.settings.context import GazeContext
from gaze.video.windows import SamplingSettings

_TYPE_NAMES: Any = Literal[tuple(load_codebook().codebook.type_names())]


class FindingBase(BaseModel):
    """One failure as a baseline reports it (the dimension follows from the type)."""

    model_config = ConfigDict(extra="forbid")
    start_s: float = Field(ge=0)
    end_s: float = Field(ge=0)
    severity: int = Field(ge=1, le=5)
    description: str
    evidence: list[str]
    confidence: float = Field(ge=0, le=1)


# ``type`` may only name a codebook type: the schema enforces it at the server.
Finding: Any = create_model("Finding", __base__=FindingBase, type=(_TYPE_NAMES, ...))
Findings: Any = create_model(
    "Findings",
    __config__=ConfigDict(extra="forbid"),
    reasoning=(str, ...),
    failures=(list[Finding], ...),
)


def to_events(findings: Sequence[Any], clip_end_s: float) -> list[Event]:
    book = load_codebook().codebook
    events = []
    for f in findings:
        start, end = sorted((min(f.start_s, clip_end_s), min(f.end_s, clip_end_s)))
        events.append(
            Event(
                dimension=book.dimension_of(f.type),
                type=f.type,
                start_s=start,
                end_s=end,
                severity=float(f.severity),
                description=f.description,
                evidence=list(f.evidence),
                confidence=f.confidence,
            )
        )
    return sorted(events, key=lambda e: (e.start_s, e.type))


def codebook_text() -> str:
    return "\n".join(f"{d}:\n{type_catalogue(d)}" for d in DIMENSIONS)


async def propose(
    caller: Caller,
    method: str,
    instruction: str,
    frames: Sequence[tuple[float, bytes]],
    initial: tuple[float, bytes],
    max_retries: int,
    temperature: float,
    sample: int = 0,
) -> Any:
    if method == "cot":
        names = ", ".join(load_codebook().codebook.type_names())
        text = load_prompt("baseline_cot").render(instruction=instruction, type_names=names)
        messages = [Message.text("system", text), frame_parts(frames, "Frames:")]
    else:
        text = load_prompt("baseline_b1").render(
            instruction=instruction, codebook=codebook_text(), severity_rubric=severity_rubric()
        )
        messages = [
            Message.text("system", text),
            frame_parts([initial], "Initial scene:"),
            frame_parts(frames, "Frames:"),
        ]
    return await ask(
        caller,
        "specialist",
        messages,
        Findings,
        max_retries=max_retries,
        temperature=temperature,
        sample=sample,
    )


B2_SAMPLING_TEMPERATURE = 0.7
"""b2's sampling temperature when the run's own is 0 (samples at temperature 0 are one answer
repeated); a run with a temperature above 0 samples at that."""


def b2_temperature(run_temperature: float) -> float:
    """The temperature b2's samples are sent at (and the run records)."""
    return run_temperature if run_temperature > 0 else B2_SAMPLING_TEMPERATURE


def agree(samples: Sequence[Sequence[Any]], k: int, iou: float = 0.5) -> list[Any]:
    """Self-consistency: cluster findings of k samples (same type, IoU >= iou); keep clusters
    seen in at least half the samples, with median span and severity and confidence = share."""
    clusters: list[list[tuple[int, Any]]] = []
    for s, findings in enumerate(samples):
        for f in findings:
            span = {"start_s": f.start_s, "end_s": f.end_s}
            home = next(
                (
                    c
                    for c in clusters
                    if c[0][1].type == f.type
                    and all(
                        temporal_iou(span, {"start_s": g.start_s, "end_s": g.end_s}) >= iou
                        for _, g in c
                    )
                ),
                None,
            )
            (home.append((s, f)) if home is not None else clusters.append([(s, f)]))
    kept = []
    for cluster in clusters:
        voters = {s for s, _ in cluster}
        if len(voters) < math.ceil(k / 2):
            continue
        members = [f for _, f in cluster]
        lead = max(members, key=lambda f: f.confidence)
        kept.append(
            lead.model_copy(
                update={
                    "start_s": float(sorted(f.start_s for f in members)[len(members) // 2]),
                    "end_s": float(sorted(f.end_s for f in members)[len(members) // 2]),
                    "severity": int(sorted(f.severity for f in members)[len(members) // 2]),
                    "confidence": len(voters) / k,
                }
            )
        )
    return kept


BASELINE_PROMPTS: dict[str, tuple[str, ...]] = {
    "cot": ("baseline_cot",),
    "b1": ("baseline_b1",),
    "b2": ("baseline_b1",),
    "b3": ("baseline_cot", "baseline_verify"),
}
"""The prompts each control method uses (recorded in its reports' manifests)."""


@dataclass(frozen=True)
class BaselineSettings:
    """What a control method computes with: only the settings it uses, each recorded in its
    reports' manifest (and compared when a batch run resumes)."""

    method: str
    model: str | None
    """The default model, ``provider:model``."""
    base_url: str | None
    """Where it was served (no credentials)."""
    roles: dict[str, str]
    """Per-role models (redacted)."""
    sampling: SamplingSettings
    """Windows and frames: which frames the method is shown."""
    image_detail: str
    max_frames: int
    """Most frames in one call (spread evenly over the clip)."""
    max_retries: int
    temperature: float
    """What its calls are sent at (b2: its samples' temperature, ``b2_temperature``)."""
    samples: int | None = None
    """b2: self-consistency samples."""
    verify_threshold: float | None = None
    """b3: the verifier's acceptance threshold (the run's critic threshold)."""

    def record(self) -> dict[str, Any]:
        """The settings as the run manifest records them (what a method does not use is left
        out)."""
        out = dataclasses.asdict(self)
        out.pop("method")
        out.update(out.pop("sampling"))  # window_s, frames_per_window, ... as every run records
        return {k: v for k, v in out.items() if v is not None or k in ("model", "base_url")}


def baseline_settings(method: str, ctx: GazeContext, samples: int) -> BaselineSettings:
    """The settings ``method`` takes from a run's context."""
    recorded = ctx.settings()
    return BaselineSettings(
        method=method,
        model=recorded["model"],
        base_url=recorded["base_url"],
        roles=recorded["roles"],
        sampling=sampling_of(ctx),
        image_detail=ctx.image_detail,
        # a base segment's frames: a long clip's grown segments are the graph's, not theirs
        max_frames=min(ctx.max_frames_per_call, ctx.max_segment_windows * ctx.frames_per_window),
        max_retries=ctx.max_retries,
        temperature=b2_temperature(ctx.temperature) if method == "b2" else ctx.temperature,
        samples=samples if method == "b2" else None,
        verify_threshold=ctx.critic_threshold if method == "b3" else None,
    )


async def run_baseline(
    caller: Caller,
    settings: BaselineSettings,
    instruction: str,
    frames: Sequence[tuple[float, bytes]],
    initial: tuple[float, bytes],
    clip_end_s: float,
) -> tuple[list[Event], list[CallRecord], list[str]]:
    """Events, call records and problems (calls that never parsed) of one clip."""
    method, max_retries, temperature = settings.method, settings.max_retries, settings.temperature
    frames = subsample(frames, settings.max_frames)
    records: list[CallRecord] = []
    problems: list[str] = []
    if method in ("cot", "b1"):
        result = await propose(
            caller, method, instruction, frames, initial, max_retries, temperature
        )
        records += result.records
        if result.value is None:
            return [], records, [f"{method}: {result.error}"]
        return to_events(result.value.failures, clip_end_s), records, problems
    if method == "b2":
        samples = settings.samples or 1
        results = await all_settled(
            *(
                propose(
                    caller,
                    "b1",
                    instruction,
                    frames,
                    initial,
                    max_retries,
                    temperature,
                    sample=i,
                )
                for i in range(samples)
            )
        )
        for r in results:
            records += r.records
        parsed = [r.value.failures for r in results if r.value is not None]
        problems = [f"b2 sample: {r.error}" for r in results if r.value is None]
        if not parsed:
            return [], records, problems or ["b2: no sample parsed"]
        return to_events(agree(parsed, samples), clip_end_s), records, problems
    if method == "b3":
        first = await propose(caller, "cot", instruction, frames, initial, max_retries, temperature)
        records += first.records
        if first.value is None:
            return [], records, [f"b3 propose: {first.error}"]
        claims = first.value.failures
        if not claims:
            return [], records, problems
        listing = "\n".join(
            f"[{i}] {c.type} {c.start_s:.2f}-{c.end_s:.2f} s: {c.description}"
            for i, c in enumerate(claims)
        )
        text = load_prompt("baseline_verify").render(instruction=instruction, proposals=listing)
        check = await ask(
            caller,
            "critic",
            [Message.text("system", text), frame_parts(frames, "Frames:")],
            CriticOutput,
            max_retries=max_retries,
        )
        records += check.records
        if check.value is None:
            return [], records, [f"b3 verify: {check.error}"]
        as_dicts = [c.model_dump() for c in claims]
        threshold = settings.verify_threshold if settings.verify_threshold is not None else 0.5
        accepted, _, unruled = verify(as_dicts, check.value.verdicts, threshold)
        if unruled:  # no verdict is not a rejection (the graph's critic keeps them too)
            accepted += unruled
            problems = [*problems, f"b3 verify: {len(unruled)} claims without a verdict, kept"]
        kept = [
            Finding.model_validate({k: v for k, v in a.items() if k in Finding.model_fields})
            for a in accepted
        ]
        return to_events(kept, clip_end_s), records, problems
    raise ValueError(f"unknown baseline {method!r}")
