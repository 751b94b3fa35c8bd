"""The trust report of ``gaze probe`` as a page: written beside ``trust.json``, and into the
viewer's site of the probe's run (linked from its index)."""

from __future__ import annotations

from typing import Any

from gaze.report.templates import render
from gaze.view.pages import page

TRUST_FILE = "trust.json"
"""A probe folder's trust report; its run folder is ``run/`` beside it."""


def trust_page(report: dict[str, Any], back: str = "") -> str:
    """The page of a trust report (``back``: the run index it belongs to, if any)."""
    body = render("trust.html.j2", t=report, back=back)
    return page(f"gaze trust report: {report['method']}", body)
