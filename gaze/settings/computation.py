"""What a run computes: the settings that change a report's content (models, branches,
sampling, thresholds, ablation switches). A batch run resumes only under the same ones."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from gaze.agents.common import VideoCut
from gaze.environment import from_environment, model_of
from gaze.models import defaults as model_defaults
from gaze.settings.describe import describe
from gaze.video.windows import SamplingSettings, window_at

_SAMPLING = SamplingSettings()
"""The sampling defaults live with the sampling code; the settings take them from there."""


@dataclass(kw_only=True)
class Computation:
    """The settings that decide what a run computes (each recorded in the report)."""

    model: str | None = field(
        default=None,
        metadata=describe(
            "Default backbone, PROVIDER:MODEL (e.g. openai:gpt-4o, scripted:auto). "
            "None: the GAZE_MODEL environment variable."
        ),
    )
    roles: dict[str, str] = field(
        default_factory=dict,
        metadata=describe(
            "Per-role backbones, role -> PROVIDER:MODEL, optionally followed by "
            "',base_url=URL' and ',key_env=VARIABLE' for a role with its own endpoint and key "
            "(roles: grounding, observer, router, specialist, critic, judge, progress, "
            "similarity)."
        ),
    )
    base_url: str | None = field(
        default=None,
        metadata=describe(
            "Base URL of an OpenAI-compatible server (vLLM, SGLang, Ollama, a gateway); several "
            "URLs separated by spaces (--base-url repeated), or @FILE naming a JSON pool file, "
            "spread requests over a fleet serving the same model (sticky by clip, least "
            "outstanding, failover). None: GAZE_BASE_URL."
        ),
    )
    sections: list[str] = field(
        default_factory=lambda: ["diagnosis"],
        metadata=describe(
            "Report sections to produce: diagnosis (failure events from the graph), signals (pixel "
            "signals), pa_ia (physical adherence and instruction alignment scores), progress "
            "(task-progress curve and OPD metrics)."
        ),
    )
    progress_style: str = field(
        default="sequence",
        metadata=describe(
            "Progress judge: sequence (frames at 1 fps -> progress per frame), pair (adjacent "
            "frames -> signed change) or recorded (curves read from progress_file)."
        ),
    )
    progress_file: str | None = field(
        default=None,
        metadata=describe(
            "JSONL of recorded curves ({clip_id or case_id, progress: [...]}) for "
            "progress_style=recorded."
        ),
    )
    window_s: float = field(
        default=_SAMPLING.window_s, metadata=describe("Window length in seconds.")
    )
    frames_per_window: int = field(
        default=_SAMPLING.frames_per_window,
        metadata=describe("Frames sampled per window (16 per 4 s = 4 fps)."),
    )
    max_side: int = field(
        default=_SAMPLING.max_side,
        metadata=describe("Longest side of frames sent to models, pixels."),
    )
    jpeg_quality: int = field(
        default=_SAMPLING.jpeg_quality,
        metadata=describe(
            "JPEG quality of frames sent to models, 1-100 (lower: fewer bytes per image; the "
            "token count depends on the size, not the quality)."
        ),
    )
    grid: bool = field(
        default=_SAMPLING.grid,
        metadata=describe(
            "Send each window as one grid image of its frames, each tile stamped with its time "
            "(RoboGaze's layout; max_side is then the grid's longest side): a few large images "
            "per clip instead of many small ones."
        ),
    )
    frames_as: str = field(
        default="images",
        metadata=describe(
            "How the observer, specialist and critic calls send a window's frames: images (one "
            "image part per frame; every provider) or video (one video part per window, its "
            "frames as JPEGs, as vLLM takes data:video/jpeg; Qwen-VL models merge each two "
            "frames into one set of tokens: about half the image tokens, every frame still "
            "sent). video needs an OpenAI-compatible server (--base-url) serving a video model."
        ),
    )
    image_detail: str = field(
        default="auto",
        metadata=describe(
            "OpenAI image detail: auto, low (one 512 px tile per image, 85 tokens on OpenAI's "
            "hosted models) or high. Sent only by the openai provider."
        ),
    )
    top_k: int = field(default=3, metadata=describe("Dimensions the router keeps per segment."))
    critic_threshold: float = field(
        default=0.5,
        metadata=describe("Minimum critic confidence for a hypothesis to become an event."),
    )
    merge_iou: float = field(
        default=0.6,
        metadata=describe(
            "Temporal IoU at or above which hypotheses about the same event are merged."
        ),
    )
    temperature: float = field(
        default=model_defaults.TEMPERATURE, metadata=describe("Sampling temperature.")
    )
    max_retries: int = field(
        default=model_defaults.MAX_RETRIES,
        metadata=describe(
            "Retries per call, one budget for transport errors (after a backoff pause) and "
            "malformed output (the error is fed back): at most 1 + max_retries requests."
        ),
    )
    use_task_memory: bool = field(
        default=True, metadata=describe("Ablation switch: False skips task grounding.")
    )
    use_scene_memory: bool = field(
        default=True, metadata=describe("Ablation switch: False skips scene grounding.")
    )
    use_router: bool = field(
        default=True,
        metadata=describe("Ablation switch: False sends every segment to all six specialists."),
    )
    use_critic: bool = field(
        default=True,
        metadata=describe(
            "Ablation switch: False turns every hypothesis into an event unverified."
        ),
    )
    pixel_hints: bool = field(
        default=True,
        metadata=describe(
            "Hand pixel-evidence measurements to the physical-plausibility and visual-quality "
            "specialists."
        ),
    )
    max_segment_windows: int = field(
        default=4,
        metadata=describe(
            "Segment length, in windows, of a clip up to segments_per_clip such segments; "
            "longer subtask spans are split. Each segment costs an observer, a specialist and "
            "(with findings) a critic call: 4 keeps a 60 s clip at 14 calls at most; 2 halves "
            "what each call sends and doubles the calls."
        ),
    )
    segments_per_clip: int = field(
        default=model_defaults.SEGMENTS_PER_CLIP,
        metadata=describe(
            "Segments a longer clip is cut into by length: its segments grow past "
            "max_segment_windows, up to the frames max_frames_per_call and the served model "
            "take, so a 180 s clip needs no more calls than a 60 s one (subtask spans may cut "
            "more). 0: segments never grow."
        ),
    )
    segment_observers: bool = field(
        default=True,
        metadata=describe(
            "One observer call sees the windows a segment examines (max_segment_windows, when "
            "their frames fit max_frames_per_call) and answers for each: fewer observer calls, "
            "and the segment's specialist call sends the same frames in the same order, a "
            "prefix a server's cache already holds. Off: one call per window."
        ),
    )
    max_frames_per_call: int = field(
        default=model_defaults.MAX_FRAMES_PER_CALL,
        metadata=describe(
            "Most frames sent in one observer, specialist or critic call (spread evenly), and "
            "how far a long clip's segments grow (192: twelve windows). A segment is sent "
            "whole, so its frames repeat, byte for byte and in order, what an observer sent "
            "before (a prefix cache reuses them). A server that takes fewer gets shorter "
            "segments; lower it with max_segment_windows (32 with 2) for a shorter context."
        ),
    )

    def resolved_model(self) -> str | None:
        return model_of(self.model)

    def video_windows(self) -> VideoCut | None:
        """How frames-seeing calls cut their videos (one per window of the clip); None: they
        send images."""
        if self.frames_as != "video":
            return None
        window_of = functools.partial(window_at, window_s=self.window_s)
        return VideoCut(window_of, round(self.frames_per_window / self.window_s, 6))

    def resolved_base_url(self) -> str | None:
        return self.base_url or from_environment("base_url")
