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
from urllib.parse import quote

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
from gaze.report.terminal import severity_level
from gaze.schema.codebook import DIMENSIONS
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
    is an empty data URL)."""
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>{GENERATOR_MARK}"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        "<link rel='icon' href='data:,'>"
        f"<title>{escape(title)}</title><style>{styles}</style></head><body>{body}"
        f"<script>{script}</script></body></html>\n"
    )


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


def _jpeg_uri(still: Still) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(still.jpeg).decode("ascii")


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
        f'<image href="{_jpeg_uri(still)}" width="{w}" height="{h}"/>{"".join(boxes)}</svg>'
        f"<figcaption>{escape(frame.role)} · {still.t_s:.2f} s</figcaption></figure>"
    )


def event_card(index: int, ev: Event, frames: list[KeyFrame], media: Media) -> str:
    level = severity_level(ev.severity)
    conf = "" if ev.confidence is None else f" · confidence {ev.confidence:.2f}"
    evidence = "".join(f"<li>{escape(item)}</li>" for item in ev.evidence)
    also = [d for d in ev.dimensions if d != ev.dimension]

    def shown_at(t: float) -> float | None:
        still = media.stills.get((t, EVENT_SIDE))
        return None if still is None else still.t_s

    figures = [
        keyframe_figure(frame, media.stills[(wanted, EVENT_SIDE)])
        for wanted, frame in merge_frames(frames, shown_at)
    ]
    return (
        f'<section class="event" id="ev-{index}" data-start="{ev.start_s:g}" '
        f'data-end="{ev.end_s:g}"><header>'
        f'<button class="seek" data-t="{ev.start_s:g}">&#9654; {ev.start_s:.2f}-'
        f"{ev.end_s:.2f} s</button><b>{escape(ev.type)}</b>"
        f'<span class="dim">{escape(ev.dimension)}'
        + (f" (also {escape(', '.join(also))})" if also else "")
        + f"</span><span class='sev' style='background:{SEVERITY_COLOUR[level]}'>"
        f"severity {ev.severity:g}</span><span class='dim'>{conf}</span></header>"
        f"<div>{escape(ev.description)}</div>"
        + (f"<ul class='dim'>{evidence}</ul>" if evidence else "")
        + (f"<div class='kfs'>{''.join(figures)}</div>" if figures else "")
        + "</section>"
    )


def strip_html(report: Report, media: Media) -> str:
    times, step = strip_times(report)
    figures = [
        f'<figure data-t="{s.t_s:g}"><img src="{_jpeg_uri(s)}" alt="frame at {s.t_s:.2f} s" '
        f'width="{s.width}" height="{s.height}"><figcaption>{s.t_s:.2f}</figcaption></figure>'
        for t in times
        if (s := media.stills.get((t, STRIP_SIDE))) is not None
    ]
    if not figures:
        return ""
    which = "every sampled frame" if step == 1 else f"every {step}th sampled frame"
    return (
        f"<h2>Frames</h2><p class='dim'>{which} of the windows (what a model is shown), "
        f"in seconds; click one to seek.</p><div class='strip'>{''.join(figures)}</div>"
    )


def status_html(report: Report, media: Media) -> str:
    """Flags, problems and coverage gaps first, so no reader mistakes a partial report."""
    parts = []
    if report.flags:
        parts.append(
            "<p>"
            + "".join(
                f"<span class='flag' title='{escape(KNOWN_FLAGS.get(f, ''))}'>{escape(f)}</span>"
                for f in report.flags
            )
            + "</p>"
        )
    a = report.assessment
    if a.not_assessed:
        parts.append(
            f"<div class='note'>Not assessed (cannot be called clean): "
            f"{escape(', '.join(a.not_assessed))}</div>"
        )
    if a.incomplete:
        parts.append(
            f"<div class='note'>Incomplete (calls gave no usable output): "
            f"{escape(', '.join(a.incomplete))}</div>"
        )
    parts += [f"<div class='problem'>{escape(p)}</div>" for p in report.problems]
    warnings = report.clip.warnings if report.clip else []
    parts += [f"<div class='note'>{escape(w)}</div>" for w in warnings]
    if media.note:
        parts.append(f"<div class='note'>{escape(media.note)}</div>")
    return "".join(parts)


def judges_html(report: Report, axis: TimeAxis | None) -> str:
    parts = []
    for name, score in (
        ("Physical adherence (PA)", report.pa),
        ("Instruction alignment (IA)", report.ia),
    ):
        if score is not None:
            subs = ", ".join(f"{escape(k)} {v}/2" for k, v in score.subscores.items())
            parts.append(
                f"<p><b>{name}: {score.score}/5</b> <span class='dim'>{subs}</span>"
                f"<br>{escape(score.rationale)}</p>"
            )
    curve = report.progress
    if curve is not None and curve.processed and axis is not None:
        metrics = ", ".join(f"{k} {v:.2f}" for k, v in curve.metrics.items() if v is not None)
        raw = unify(curve.raw).tolist() if curve.raw else []
        parts.append(
            f"<p><b>Task progress</b> <span class='dim'>{escape(metrics)}</span></p>"
            "<div class='chart'>"
            + progress_svg(
                curve.times_s, raw, curve.processed, drawdown_spans(curve.processed), axis
            )
            + "</div>"
        )
    return "<h2>Judges</h2><div class='scores'>" + "".join(parts) + "</div>" if parts else ""


def rejected_html(report: Report) -> str:
    if not report.rejected:
        return ""
    rows = "".join(
        f"<tr><td><button class='seek' data-t='{r.start_s:g}'>{r.start_s:.2f}-{r.end_s:.2f}"
        f"</button></td><td>{escape(r.dimension)}<br><b>{escape(r.type)}</b></td>"
        f"<td>{escape(r.source)}</td><td>{r.confidence:.2f}</td><td>{escape(r.reason)}</td></tr>"
        for r in report.rejected
    )
    return (
        f"<details><summary>{len(report.rejected)} hypothesis(es) rejected by the critic"
        "</summary><table><tr><th>when (s)</th><th>dimension / type</th><th>from</th>"
        f"<th>conf</th><th>critic's reason</th></tr>{rows}</table></details>"
    )


def references_html(refs: Sequence[ScoringEvent]) -> str:
    if not refs:
        return ""
    items = "".join(
        f"<li><button class='seek' data-t='{r.start_s:g}'>{r.start_s:.2f}-{r.end_s:.2f} s"
        f"</button> <b>{escape(r.kind)}</b> <span class='dim'>{escape(r.dimension or '')} · "
        f"severity {r.severity_shown}</span> {escape(r.description)}</li>"
        for r in refs
    )
    return (
        f"<details><summary>{len(refs)} reference event(s) annotated for this clip (outlined "
        f"in the timeline)</summary><ul>{items}</ul></details>"
    )


def manifest_html(report: Report) -> str:
    m = report.manifest
    models = ", ".join(f"{escape(r)} {escape(v)}" for r, v in m.models.items()) or "none"
    calls = sum(m.calls.values())
    prompts = ", ".join(f"{escape(p.id)} {escape(p.version)}" for p in m.prompts)
    return (
        f"<p class='dim'>models: {models} · {calls} calls ({m.failed_requests} failed) · "
        f"{m.images} images · {m.input_tokens} in / {m.output_tokens} out tokens · "
        f"${m.cost_usd:.4f} · {m.wall_time_s:.2f} s<br>gaze {escape(m.gaze_version)} · "
        f"codebook {escape(m.codebook_version)} <code>{escape(m.codebook_hash)}</code>"
        + (f" · prompts {prompts}" if prompts else "")
        + (f" · written {escape(m.created_at)}" if m.created_at else "")
        + "</p>"
    )


def render_html(
    report: Report,
    page: Path | None = None,
    video: Path | None = None,
    embed_video: bool = False,
    back: str | None = None,
    references: Sequence[ScoringEvent] = (),
) -> str:
    """The report as one HTML page. ``page`` is where it will be written (the video is linked
    relative to it); ``video`` overrides the clip path recorded in the report; ``back`` links
    to the page it belongs to (a run viewer's index); ``references`` are annotated events shown
    beside the predictions (a benchmark manifest's)."""
    events = sorted(report.events, key=lambda e: (e.start_s, e.end_s))
    refs = sorted(references, key=lambda e: (e.start_s, e.end_s))
    media, plans = gather_media(report, events, page, video, embed_video)
    info = report.clip
    duration = (
        info.duration_s if info and info.duration_s > 0 else max([e.end_s for e in events] + [1.0])
    )
    axis = TimeAxis(duration)
    meta = (
        ""
        if info is None
        else f"{info.duration_s:.2f} s · {info.fps:g} fps · {info.frame_count} frames · "
        f"{info.width}x{info.height}"
    )
    player = (
        f"<div class='player'><video id='player' controls preload='metadata' "
        f"src='{escape(media.video_src)}'></video><span class='dim'>at <span id='now'>0.00 s"
        "</span></span></div>"
        if media.video_src
        else ""
    )
    cards = "".join(event_card(i, ev, plans[i], media) for i, ev in enumerate(events))
    listing = cards or "<p>No failure events found in the sampled frames.</p>"
    notes = "".join(f"<div class='note'>{escape(n)}</div>" for n in report.consistency)
    body = (
        (f"<p><a href='{escape(back)}'>← run</a></p>" if back else "")
        + f"<h1>{escape(report.clip_id)}</h1><p>{escape(report.instruction)}<br>"
        f"<span class='dim'>{escape(meta)} · {len(events)} event(s) · "
        f"{escape(report.assessment.mode)} mode</span></p>"
        f"{status_html(report, media)}{player}"
        f"<h2>Timeline</h2><div class='chart'>"
        f"{timeline_svg(events, report.assessment.assessed or list(DIMENSIONS), axis, refs)}"
        f"</div>{references_html(refs)}"
        f"{strip_html(report, media)}{judges_html(report, axis)}"
        f"<h2>Events</h2>{listing}{rejected_html(report)}{notes}"
        f"<p class='dim'><i>{escape(report.assessment.note)}</i></p>{manifest_html(report)}"
    )
    return html_page(f"gaze · {report.clip_id}", body, static("report.css"), static("report.js"))
