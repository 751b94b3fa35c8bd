"""Pages from Jinja templates (``gaze/report/templates``), escaped by default: a
value reaches a page as text unless a template marks it as markup."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jinja2


@cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("gaze.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["seconds"] = seconds
    env.filters["pretty"] = lambda value: json.dumps(value, indent=1, ensure_ascii=False)
    return env


def seconds(value: float | None, places: int = 2) -> str:
    """A time or duration for people: ``7.67 s``, not ``7.66667``."""
    return "—" if value is None else f"{value:.{places}f} s"


def render(template: str, **values: Any) -> str:
    return _environment().get_template(template).render(**values)
