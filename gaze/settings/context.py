"""The run context: one dataclass, every field described (LangGraph shows them in Studio), made
of what a run computes (``Computation``) and how it runs (``Execution``)."""

from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from typing import Any

from gaze.environment import ENVIRONMENT
from gaze.errors import GazeInputError
from gaze.models.cache import public_endpoint
from gaze.redact import redact
from gaze.settings.computation import Computation
from gaze.settings.execution import Execution

SECTIONS = ("diagnosis", "signals", "pa_ia", "progress")
"""The report sections a run can produce (``sections``): the diagnosis graph's failure events;
pixel signals; PA/IA scores; the task-progress curve with its OPD metrics."""

PIXEL_SECTIONS = ("diagnosis", "signals")
"""The sections a run without a model can still produce: the pixel-evidence default."""


def default_of(name: str) -> Any:
    """A setting's default, as the context field declares it (the one place it is written)."""
    spec = next(f for f in fields(GazeContext) if f.name == name)
    if spec.default_factory is not MISSING:
        return spec.default_factory()
    return spec.default


def description_of(name: str) -> str:
    spec = next(f for f in fields(GazeContext) if f.name == name)
    return str(spec.metadata.get("description", ""))


@dataclass(kw_only=True)
class GazeContext(Execution, Computation):
    """Settings of one diagnosis run (all recorded in the report's run manifest): what it
    computes, then how it runs."""

    def settings(self) -> dict[str, Any]:
        """The run settings as the manifest records them (no objects, no secrets)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["model"] = self.resolved_model()
        # user info or a query string in a URL can hold a token: never record them
        out["base_url"] = public_endpoint(self.resolved_base_url()) or None
        out["roles"] = {role: redact(spec) for role, spec in self.roles.items()}
        return out

    def computed(self) -> dict[str, Any]:
        """``settings`` of what the run computes only (``Computation``'s fields): two runs
        with the same ones make the same reports, however they went."""
        what = {f.name for f in fields(Computation)}
        return {k: v for k, v in self.settings().items() if k in what}


def diagnosing(ctx: GazeContext) -> bool:
    """Whether a run makes diagnosis calls (not scores or progress only)."""
    return "diagnosis" in ctx.sections


def sections_needing_a_model(sections: list[str]) -> list[str]:
    """The asked branches that the pixel-evidence default cannot stand in for."""
    return [section for section in sections if section not in PIXEL_SECTIONS]


def has_model(ctx: GazeContext, given: bool = False) -> bool:
    """Whether a run has a model: backbones given from Python (``given``), or the context (or
    ``GAZE_MODEL``) names one. The CLI, ``gaze.diagnose`` and the graph's entry all ask this."""
    return given or ctx.resolved_model() is not None


def check_pixel_default(ctx: GazeContext) -> None:
    """Refuse, in one line, a run without a model that asks for what pixels cannot stand in for
    (roles bound without a default model, sections that need one). One rule for every entry point:
    the CLI, ``gaze.diagnose`` and LangGraph Studio's default context."""
    model = f"a default model (--model, the context's model, or {ENVIRONMENT['model']})"
    if ctx.roles:
        raise GazeInputError(f"roles {sorted(ctx.roles)} need {model} too")
    extra = sections_needing_a_model(ctx.sections)
    if extra:
        raise GazeInputError(f"sections {extra} need a model: {model}")


def wants_pixels(ctx: GazeContext) -> bool:
    """Whether a run uses the pixel pass (hints for specialists, or signals in the report)."""
    return (diagnosing(ctx) and ctx.pixel_hints) or "signals" in ctx.sections
