"""The review page: its shell from a template, its styles and script inline."""

from __future__ import annotations

from typing import Any

from gaze.report.html import html_page, static
from gaze.report.templates import render


def review_page() -> str:
    styles = static("report.css") + static("review.css", "gaze.view")
    return html_page(
        "gaze review", render("review.html.j2"), styles, static("review.js", "gaze.view")
    )


def summary_page(summary: dict[str, Any]) -> str:
    """The page of ``review_summary``'s counts (the viewer's tables: sortable, CSV)."""
    styles = static("report.css") + static("view.css", "gaze.view")
    body = render("review_summary.html.j2", s=summary)
    return html_page("gaze review: what it taught", body, styles, static("view.js", "gaze.view"))
