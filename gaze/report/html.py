"""A self-contained HTML report: what is wrong with the clip and the frames that show it.

One file, no external requests: styles and a small script inline, key frames as embedded JPEGs,
the video linked relative to the page (or inlined with ``embed_video``). Every string from the
report (model text, instruction, file names) is escaped. Charts share one time axis
(``gaze.report.svg``) so the video, the timeline and the progress curve stay in step.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from gaze.atomic import GENERATOR_MARK
from gaze.metrics.progress import drawdown_spans, unify
from gaze.report.keyframes import (
    EVENT_SIDE,
    STRIP_SIDE,
    KeyFrame,
    Still,
    event_keyframes,
    grab_stills,
    merge_frames,
)
from gaze.report.svg import SEVERITY_COLOUR, TimeAxis, progress_svg, timeline_svg
from gaze.report.templates import render
from gaze.report.terminal import severity_level
from gaze.schema.dimensions import DIMENSIONS
from gaze.schema.events import Event, ScoringEvent
from gaze.schema.report import KNOWN_FLAGS, Report
from gaze.video.windows import SamplingSettings, target_times

STRIP_MOST = 240
"""Most frames in the clip strip; longer clips show every k-th sampled frame (stated)."""
VIDEO_TYPES = {
    ".mp4": "video/mp4",
    ".m4v": "video/mp4",
    ".webm": "video/webm",
    ".mov": "video/quicktime",
    ".ogv": "video/ogg",
    ".mkv": "video/x-matroska",
}
BOX_COLOUR = "#ff2d55"


def static(name: str, package: str = "gaze.report") -> str:
    """A file of ``package``'s static folder (styles and scripts inlined into pages)."""
    return files(package).joinpath("static", name).read_text(encoding="utf-8")


def html_page(title: str, body: str, styles: str, script: str) -> str:
    """A self-contained page: styles and script inline, and no request leaving it (the favicon
    is an empty data URL). ``body``, ``styles`` and ``script`` are markup; the title is text."""
    page = render(
        "page.html.j2",
        generator_mark=Markup(GENERATOR_MARK),
        title=title,
        styles=Markup(styles),
        body=Markup(body),
        script=Markup(script),
    )
    return page.rstrip("\n") + "\n"


@dataclass
class Media:
    """What the page shows besides the report itself: the video and decoded frames."""

    video_src: str | None = None
    video_type: str = ""
    note: str = ""
    """Why there is no video or no frames, for the reader."""
    stills: dict[tuple[float, tuple[int, int]], Still] = field(default_factory=dict)


def strip_times(report: Report) -> tuple[list[float], int]:
    """The sampling instants of the report's windows (from its recorded settings), thinned to
    at most ``STRIP_MOST``; and the thinning step (1 = every sampled frame)."""
    if report.clip is None:
        return [], 1
    settings = report.manifest.settings
    default = SamplingSettings()
    sampling = SamplingSettings(
        window_s=float(settings.get("window_s", default.window_s)),
        frames_per_window=int(settings.get("frames_per_window", default.frames_per_window)),
    )
    times = target_times(report.clip.duration_s, sampling)
    step = max(1, -(-len(times) // STRIP_MOST))
    return times[::step], step


def video_source(video: Path, page: Path | None, embed: bool) -> str:
    if embed:
        mime = VIDEO_TYPES.get(video.suffix.lower(), "video/mp4")
        return f"data:{mime};base64," + base64.b64encode(video.read_bytes()).decode("ascii")
    if page is None:
        return video.resolve().as_uri()
    relative = os.path.relpath(video.resolve(), page.resolve().parent)
    return quote(Path(relative).as_posix())


def gather_media(
    report: Report,
    events: Sequence[Event],
    page: Path | None,
    video: Path | None = None,
    embed_video: bool = False,
) -> tuple[Media, list[list[KeyFrame]]]:
    """Decode the frames the page shows (one pass) and point at the video."""
    info = report.clip
    plans: list[list[KeyFrame]] = [[] for _ in events]
    if info is None:
        return Media(note="The clip could not be decoded; no frames are shown."), plans
    source = Path(video) if video is not None else Path(info.path)
    if not source.is_file():
        return Media(note=f"Video not found at {source}; frames and player are not shown."), plans
    plans = [event_keyframes(ev, info.duration_s, info.fps) for ev in events]
    wanted = [(k.t_s, EVENT_SIDE) for plan in plans for k in plan]
    wanted += [(t, STRIP_SIDE) for t in strip_times(report)[0]]
    media = Media(
        video_src=video_source(source, page, embed_video),
        video_type=VIDEO_TYPES.get(source.suffix.lower(), ""),
        stills=grab_stills(source, wanted, info.fps),
    )
    if not media.stills:
        media.note = f"{source} could not be decoded here; frames are not shown."
    return media, plans


def keyframe_figure(frame: KeyFrame, still: Still) -> str:
    w, h = still.width, still.height
    boxes = []
    for box in frame.boxes:
        x0, y0, x1, y1 = box.box
        boxes.append(
            f'<rect x="{x0 * w:.1f}" y="{y0 * h:.1f}" width="{(x1 - x0) * w:.1f}" '
            f'height="{(y1 - y0) * h:.1f}" fill="none" stroke="{BOX_COLOUR}" stroke-width="2"/>'
        )
        if box.label:
            boxes.append(
                f'<text x="{x0 * w + 2:.1f}" y="{max(y0 * h - 3, 10):.1f}" font-size="11" '
                f'fill="{BOX_COLOUR}" stroke="#fff" stroke-width="0.6">{escape(box.label)}</text>'
            )
    return (
        f'<figure class="kf" data-t="{still.t_s:g}"><svg viewBox="0 0 {w} {h}" width="{w}" '
        f'height="{h}" role="img" '
        f'aria-label="{escape(frame.role)} frame at {still.t_s:.2f} s">'
        f'<image href="{still.data_url}" width="{w}" height="{h}"/>{"".join(boxes)}</svg>'
        f"<figcaption>{escape(frame.role)} · {still.t_s:.2f} s</figcaption></figure>"
    )


def references_html(refs: Sequence[ScoringEvent]) -> str:
    """The annotated reference events of a clip, as its page lists them."""
    return render("report_references.html.j2", refs=refs)


def render_html(
    report: Report,
    page: Path | None = None,
    video: Path | None = None,
    embed_video: bool = False,
    back: str | None = None,
    references: Sequence[ScoringEvent] = (),
    nav: str = "",
    extra: str = "",
) -> str:
    """The report as one HTML page. ``page`` is where it will be written (the video is linked
    relative to it); ``video`` overrides the clip path recorded in the report; ``back`` links
    to the page it belongs to (a run viewer's index); ``references`` are annotated events shown
    beside the predictions (a benchmark manifest's); ``nav`` replaces the back link (a run
    viewer's previous / next); ``extra`` is markup shown after the events (the transcript)."""
    events = sorted(report.events, key=lambda e: (e.start_s, e.end_s))
    refs = sorted(references, key=lambda e: (e.start_s, e.end_s))
    media, plans = gather_media(report, events, page, video, embed_video)
    info = report.clip
    duration = (
        info.duration_s if info and info.duration_s > 0 else max([e.end_s for e in events] + [1.0])
    )
    axis = TimeAxis(duration)
    times, step = strip_times(report)
    curve = report.progress
    progress = None
    if curve is not None and curve.processed:
        raw = unify(curve.raw).tolist() if curve.raw else []
        chart = progress_svg(
            curve.times_s, raw, curve.processed, drawdown_spans(curve.processed), axis
        )
        metrics = ", ".join(f"{k} {v:.2f}" for k, v in curve.metrics.items() if v is not None)
        progress = {"metrics": metrics, "chart": Markup(chart)}
    body = render(
        "report.html.j2",
        report=report,
        nav=Markup(nav or (f"<p><a href='{escape(back)}'>← run</a></p>" if back else "")),
        meta=""
        if info is None
        else f"{info.duration_s:.2f} s · {info.fps:g} fps · {info.frame_count} frames · "
        f"{info.width}x{info.height}",
        events=events,
        known_flags=KNOWN_FLAGS,
        warnings=info.warnings if info else [],
        media_note=media.note,
        video_src=media.video_src,
        timeline=Markup(
            timeline_svg(events, report.assessment.assessed or list(DIMENSIONS), axis, refs)
        ),
        refs=refs,
        strip=[
            {"t_s": s.t_s, "uri": s.data_url, "width": s.width, "height": s.height}
            for t in times
            if (s := media.stills.get((t, STRIP_SIDE))) is not None
        ],
        strip_which="every sampled frame" if step == 1 else f"every {step}th sampled frame",
        scores=[
            (name, score)
            for name, score in (
                ("Physical adherence (PA)", report.pa),
                ("Instruction alignment (IA)", report.ia),
            )
            if score is not None
        ],
        progress=progress,
        cards=[_card(ev, plans[i], media) for i, ev in enumerate(events)],
        extra=Markup(extra),
    )
    return html_page(f"gaze · {report.clip_id}", body, static("report.css"), static("report.js"))


def _card(ev: Event, frames: list[KeyFrame], media: Media) -> dict[str, Any]:
    """What an event's card shows besides the event: its key frames, drawn with their boxes."""

    def shown_at(t: float) -> float | None:
        still = media.stills.get((t, EVENT_SIDE))
        return None if still is None else still.t_s

    figures = [
        keyframe_figure(frame, media.stills[(wanted, EVENT_SIDE)])
        for wanted, frame in merge_frames(frames, shown_at)
    ]
    return {
        "event": ev,
        "also": [d for d in ev.dimensions if d != ev.dimension],
        "colour": SEVERITY_COLOUR[severity_level(ev.severity)],
        "figures": Markup("".join(figures)),
    }
