"""Run settings: one context dataclass, every field described (LangGraph shows them in Studio)."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from gaze.environment import ENVIRONMENT, from_environment
from gaze.errors import GazeInputError
from gaze.models.cache import public_endpoint
from gaze.redact import redact
from gaze.video.windows import SamplingSettings

JUDGES = ("diagnosis", "signals", "pa_ia", "progress")
"""The branches a run can take (``judges``): the diagnosis graph; pixel signals in the report;
PA/IA scores; the task-progress curve with its OPD metrics."""

PIXEL_JUDGES = ("diagnosis", "signals")
"""The branches a run without a model can still take: the pixel-evidence default."""


def default_of(name: str) -> Any:
    """A setting's default, as the context field declares it (the one place it is written)."""
    spec = next(f for f in fields(GazeContext) if f.name == name)
    if spec.default_factory is not MISSING:
        return spec.default_factory()
    return spec.default


def description_of(name: str) -> str:
    spec = next(f for f in fields(GazeContext) if f.name == name)
    return str(spec.metadata.get("description", ""))


_SAMPLING = SamplingSettings()
"""The sampling defaults live with the sampling code; the context takes them from there."""


def _describe(text: str) -> dict[str, str]:
    return {"description": text}


@dataclass(kw_only=True)
class GazeContext:
    """Settings of one diagnosis run (all recorded in the report's run manifest)."""

    model: str | None = field(
        default=None,
        metadata=_describe(
            "Default backbone, PROVIDER:MODEL (e.g. openai:gpt-4o, scripted:auto). "
            "None: the GAZE_MODEL environment variable."
        ),
    )
    roles: dict[str, str] = field(
        default_factory=dict,
        metadata=_describe(
            "Per-role backbones, role -> PROVIDER:MODEL, optionally followed by "
            "',base_url=URL' and ',key_env=VARIABLE' for a role with its own endpoint and key "
            "(roles: grounding, observer, router, specialist, critic, judge, progress, "
            "similarity)."
        ),
    )
    base_url: str | None = field(
        default=None,
        metadata=_describe(
            "Base URL of an OpenAI-compatible server (vLLM, SGLang, Ollama, a gateway); several "
            "URLs separated by spaces (--base-url repeated), or @FILE naming a JSON pool file, "
            "spread requests over a fleet serving the same model (sticky by clip, least "
            "outstanding, failover). None: GAZE_BASE_URL."
        ),
    )
    endpoint_concurrency: int = field(
        default=0,
        metadata=_describe(
            "Most requests in flight at any one endpoint of a pool (0: only --concurrency "
            "limits them); a pool file may set it per endpoint."
        ),
    )
    judges: list[str] = field(
        default_factory=lambda: ["diagnosis"],
        metadata=_describe(
            "Branches to run: diagnosis (the failure-event graph), signals (pixel signals in the "
            "report), pa_ia (physical adherence and instruction alignment scores), progress "
            "(task-progress curve and OPD metrics)."
        ),
    )
    progress_style: str = field(
        default="sequence",
        metadata=_describe(
            "Progress judge: sequence (frames at 1 fps -> progress per frame), pair (adjacent "
            "frames -> signed change) or recorded (curves read from progress_file)."
        ),
    )
    progress_file: str | None = field(
        default=None,
        metadata=_describe(
            "JSONL of recorded curves ({clip_id or case_id, progress: [...]}) for "
            "progress_style=recorded."
        ),
    )
    window_s: float = field(
        default=_SAMPLING.window_s, metadata=_describe("Window length in seconds.")
    )
    frames_per_window: int = field(
        default=_SAMPLING.frames_per_window,
        metadata=_describe("Frames sampled per window (16 per 4 s = 4 fps)."),
    )
    max_side: int = field(
        default=_SAMPLING.max_side,
        metadata=_describe("Longest side of frames sent to models, pixels."),
    )
    jpeg_quality: int = field(
        default=_SAMPLING.jpeg_quality,
        metadata=_describe(
            "JPEG quality of frames sent to models, 1-100 (lower: fewer bytes per image; the "
            "token count depends on the size, not the quality)."
        ),
    )
    grid: bool = field(
        default=_SAMPLING.grid,
        metadata=_describe(
            "Send each window as one grid image of its frames, each tile stamped with its time "
            "(RoboGaze's layout; max_side is then the grid's longest side): a few large images "
            "per clip instead of many small ones."
        ),
    )
    image_detail: str = field(
        default="auto",
        metadata=_describe(
            "OpenAI image detail: auto, low (one 512 px tile per image, 85 tokens on OpenAI's "
            "hosted models) or high. Sent only by the openai provider."
        ),
    )
    top_k: int = field(default=3, metadata=_describe("Dimensions the router keeps per segment."))
    critic_threshold: float = field(
        default=0.5,
        metadata=_describe("Minimum critic confidence for a hypothesis to become an event."),
    )
    merge_iou: float = field(
        default=0.6,
        metadata=_describe(
            "Temporal IoU at or above which hypotheses about the same event are merged."
        ),
    )
    temperature: float = field(default=0.0, metadata=_describe("Sampling temperature."))
    max_retries: int = field(
        default=3,
        metadata=_describe(
            "Retries per call, one budget for transport errors (after a backoff pause) and "
            "malformed output (the error is fed back): at most 1 + max_retries requests."
        ),
    )
    use_task_memory: bool = field(
        default=True, metadata=_describe("Ablation switch: False skips task grounding.")
    )
    use_scene_memory: bool = field(
        default=True, metadata=_describe("Ablation switch: False skips scene grounding.")
    )
    use_router: bool = field(
        default=True,
        metadata=_describe("Ablation switch: False sends every segment to all six specialists."),
    )
    use_critic: bool = field(
        default=True,
        metadata=_describe(
            "Ablation switch: False turns every hypothesis into an event unverified."
        ),
    )
    pixel_hints: bool = field(
        default=True,
        metadata=_describe(
            "Hand pixel-evidence measurements to the physical-plausibility and visual-quality "
            "specialists."
        ),
    )
    max_segment_windows: int = field(
        default=2,
        metadata=_describe("Longest segment, in windows; longer subtask spans are split."),
    )
    observer_context: bool = field(
        default=True,
        metadata=_describe(
            "Show the observer of every second window the window before it first, as context "
            "(it describes only its own window). A two-window segment's calls send that same "
            "pair, so it reaches the server once, as a prefix they share; without it the "
            "second window first arrives inside a segment call and cannot be reused. Costs one "
            "window's images more per pair, which a prefix cache serves."
        ),
    )
    max_frames_per_call: int = field(
        default=32,
        metadata=_describe(
            "Most frames sent in one specialist or critic call (spread evenly). At 32 a "
            "two-window segment is sent whole, so its frames repeat, byte for byte and in "
            "order, what an observer sent before (a prefix cache reuses them)."
        ),
    )
    concurrency: int = field(
        default=32, metadata=_describe("Most backbone requests in flight at once.")
    )
    use_cache: bool = field(
        default=True,
        metadata=_describe("Answer repeated calls from the response cache (GAZE_CACHE_DIR)."),
    )
    retry_initial_s: float = field(
        default=0.5,
        metadata=_describe(
            "First backoff pause after a transient error, seconds (doubles, with jitter)."
        ),
    )
    request_timeout_s: float = field(
        default=120.0,
        metadata=_describe(
            "Total deadline of one request, seconds, first byte to last (a server that "
            "trickles bytes cannot keep a request alive past it)."
        ),
    )
    clip_timeout_s: float = field(
        default=1800.0,
        metadata=_describe(
            "Deadline of one clip's whole diagnosis, seconds; past it the clip fails "
            "(a batch records it and redoes it on resume)."
        ),
    )
    breaker_after: int = field(
        default=6,
        metadata=_describe(
            "Calls in a row to one endpoint that got no reply after all their retries (with "
            "no success between them) after which the run sends it no more work and its clips "
            "fail at once (0: never). Failed attempts that a retry recovers do not count."
        ),
    )
    max_reply_chars: int = field(
        default=262_144,
        metadata=_describe(
            "Longest model reply accepted, characters; a longer one is a failed attempt, "
            "never fed back to the model or cached."
        ),
    )
    retry_max_s: float = field(
        default=30.0,
        metadata=_describe(
            "Longest backoff pause, seconds; a server's longer Retry-After is capped to this."
        ),
    )
    prices_file: str | None = field(
        default=None,
        metadata=_describe(
            "JSON price table extending the default one ({'models': {'provider:model': "
            "{'input', 'cached_input', 'output'}}}, USD per million tokens). None: GAZE_PRICES."
        ),
    )
    usd_per_mtok_in: float = field(
        default=0.0,
        metadata=_describe(
            "Price of a million input tokens, USD, overriding the price table for every model "
            "(0: use the table)."
        ),
    )
    usd_per_mtok_out: float = field(
        default=0.0,
        metadata=_describe("Price of a million output tokens, USD, for the cost estimate."),
    )

    def resolved_model(self) -> str | None:
        return self.model or from_environment("model")

    def resolved_base_url(self) -> str | None:
        return self.base_url or from_environment("base_url")

    def settings(self) -> dict[str, Any]:
        """The run settings as the manifest records them (no objects, no secrets)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["model"] = self.resolved_model()
        # user info or a query string in a URL can hold a token: never record them
        out["base_url"] = public_endpoint(self.resolved_base_url()) or None
        out["roles"] = {role: redact(spec) for role, spec in self.roles.items()}
        return out


def diagnosing(ctx: GazeContext) -> bool:
    """Whether a run makes diagnosis calls (not judges only)."""
    return "diagnosis" in ctx.judges


def judges_needing_a_model(judges: list[str]) -> list[str]:
    """The asked branches that the pixel-evidence default cannot stand in for."""
    return [judge for judge in judges if judge not in PIXEL_JUDGES]


def has_model(ctx: GazeContext, given: bool = False) -> bool:
    """Whether a run has a model: backbones given from Python (``given``), or the context (or
    ``GAZE_MODEL``) names one. The CLI, ``gaze.diagnose`` and the graph's entry all ask this."""
    return given or ctx.resolved_model() is not None


def check_pixel_default(ctx: GazeContext) -> None:
    """Refuse, in one line, a run without a model that asks for what pixels cannot stand in for
    (roles bound without a default model, judges that need one). One rule for every entry point:
    the CLI, ``gaze.diagnose`` and LangGraph Studio's default context."""
    model = f"a default model (--model, the context's model, or {ENVIRONMENT['model']})"
    if ctx.roles:
        raise GazeInputError(f"roles {sorted(ctx.roles)} need {model} too")
    extra = judges_needing_a_model(ctx.judges)
    if extra:
        raise GazeInputError(f"judges {extra} need a model: {model}")


def wants_pixels(ctx: GazeContext) -> bool:
    """Whether a run uses the pixel pass (hints for specialists, or signals in the report)."""
    return (diagnosing(ctx) and ctx.pixel_hints) or "signals" in ctx.judges
