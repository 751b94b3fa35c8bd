"""CLI options derived from the run context: each option's default and help text come from its
``GazeContext`` field (the one place a default is written), and ``context_from`` turns the
parsed options back into a context."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from gaze.environment import ENVIRONMENT
from gaze.settings.context import GazeContext, default_of, description_of

F = TypeVar("F", bound=Callable[..., Any])

# option name -> (context field, click type); flags invert a True default ("--no-router")
MODEL_OPTIONS: dict[str, tuple[str, Any]] = {
    "--model": ("model", str),
    "--base-url": ("base_url", str),
}
REPEATABLE = {"--base-url"}
"""Options given once per value; the context field holds the values separated by spaces."""
RUN_OPTIONS: dict[str, tuple[str, Any]] = {
    "--concurrency": ("concurrency", click.IntRange(1, 256)),
    "--frames-in-flight": ("frames_in_flight", click.IntRange(1, 100_000)),
    "--endpoint-concurrency": ("endpoint_concurrency", click.IntRange(0, 1024)),
    "--temperature": ("temperature", click.FloatRange(0, 2)),
    "--max-retries": ("max_retries", click.IntRange(0, 10)),
    "--request-timeout": ("request_timeout_s", click.FloatRange(0.1)),
    "--clip-timeout": ("clip_timeout_s", click.FloatRange(1)),
    "--window-s": ("window_s", click.FloatRange(0.5, 60)),
    "--max-side": ("max_side", click.IntRange(64, 4096)),
    "--max-frames-per-call": ("max_frames_per_call", click.IntRange(1, 256)),
    "--max-segment-windows": ("max_segment_windows", click.IntRange(1, 16)),
    "--segments-per-clip": ("segments_per_clip", click.IntRange(0, 64)),
    "--jpeg-quality": ("jpeg_quality", click.IntRange(1, 100)),
    "--image-detail": ("image_detail", click.Choice(["auto", "low", "high"])),
    "--frames-as": ("frames_as", click.Choice(["images", "video"])),
    "--frames-per-window": ("frames_per_window", click.IntRange(1, 64)),
    "--top-k": ("top_k", click.IntRange(1, 6)),
    "--critic-threshold": ("critic_threshold", click.FloatRange(0, 1)),
    "--usd-per-mtok-in": ("usd_per_mtok_in", click.FloatRange(0)),
    "--usd-per-mtok-out": ("usd_per_mtok_out", click.FloatRange(0)),
}
FLAGS: dict[str, str] = {"--grid": "grid"}
"""Flags that turn on a setting whose default is off."""
SWITCHES: dict[str, str] = {
    "--no-task-memory": "use_task_memory",
    "--no-scene-memory": "use_scene_memory",
    "--no-router": "use_router",
    "--no-critic": "use_critic",
    "--no-segment-observers": "segment_observers",
    "--no-cache": "use_cache",
}


def _param(option: str) -> str:
    return option.lstrip("-").replace("-", "_")


def context_options(
    *, run: bool = True, switches: bool = True, several_models: bool = False
) -> Callable[[F], F]:
    """Decorate a command with the context's options (model, base URL, run settings);
    ``several_models``: ``--model`` may be given more than once (the command runs each)."""

    def decorate(command: F) -> F:
        for option, (name, kind) in MODEL_OPTIONS.items():
            variable = ENVIRONMENT.get(name)
            help_text = description_of(name).split(" None:")[0]
            several = several_models and option == "--model"
            command = click.option(
                option,
                type=kind,
                multiple=option in REPEATABLE or several,
                help=f"{help_text} (default: ${variable})"
                + ("; repeat it to run each model, one run folder each." if several else "."),
            )(command)
        if run:
            for option, (name, kind) in RUN_OPTIONS.items():
                command = click.option(
                    option,
                    type=kind,
                    default=default_of(name),
                    show_default=True,
                    help=description_of(name),
                )(command)
        if run:
            for option, name in FLAGS.items():
                command = click.option(option, is_flag=True, help=description_of(name))(command)
        if switches:
            for option, name in SWITCHES.items():
                command = click.option(
                    option, is_flag=True, help=f"Turn off: {description_of(name)}"
                )(command)
        return command

    return decorate


def context_from(options: dict[str, Any], **extra: Any) -> GazeContext:
    """The context the parsed options describe (options not given keep the field default);
    the options used are removed from ``options``."""
    values: dict[str, Any] = {}
    for option, (name, _) in {**MODEL_OPTIONS, **RUN_OPTIONS}.items():
        if _param(option) in options:
            value = options.pop(_param(option))
            if option in REPEATABLE:
                value = " ".join(value) or None
            if value is not None:
                values[name] = value
    for option, name in SWITCHES.items():
        if options.pop(_param(option), False):
            values[name] = False
    for option, name in FLAGS.items():
        if options.pop(_param(option), False):
            values[name] = True
    return GazeContext(**values, **extra)
