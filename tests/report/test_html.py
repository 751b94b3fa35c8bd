"""The HTML report: escaped, self-contained, key frames that are the frames the report names,
a strip of the sampled frames, a video linked relative to the page, and a size budget."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gaze.bench.forge_common import encode
from gaze.cli.main import run
from gaze.metrics.progress import drawdown_spans
from gaze.report.html import render_html
from gaze.report.keyframes import KeyFrame, cited_times, event_keyframes, grab_stills, merge_frames
from gaze.schema.events import Event, EvidenceRegion
from gaze.schema.report import (
    Assessment,
    ClipInfo,
    JudgeScore,
    ProgressCurve,
    RejectedHypothesis,
    Report,
    RunManifest,
)
from gaze.video.clip import open_clip
from gaze.video.windows import SamplingSettings

FPS = 10.0


def numbered_clip(path: Path, frames: int, size: tuple[int, int] = (160, 120)) -> Path:
    """A clip whose frame k is one flat grey level 48 + 4k, so a decoded frame names itself."""
    width, height = size
    pictures = [np.full((height, width, 3), 48 + 4 * k, np.uint8) for k in range(frames)]
    encode(pictures, path, FPS, "h264", "high")
    return path


def frame_number(jpeg: bytes) -> int:
    import cv2

    grey = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_GRAYSCALE)
    return round((float(grey.mean()) - 45) / 4)  # h264 and JPEG darken a flat grey by ~3 levels


def event(start: float, end: float, type_: str = "object_floating", **extra) -> Event:
    return Event(
        dimension="physical_plausibility",
        type=type_,
        start_s=start,
        end_s=end,
        severity=4,
        description=extra.pop("description", "the block floats"),
        **extra,
    )


def report_for(video: Path | None, events: list[Event], duration: float, **extra) -> Report:
    clip = (
        None
        if video is None
        else ClipInfo(
            path=str(video),
            fps=FPS,
            frame_count=round(duration * FPS),
            duration_s=duration,
            width=160,
            height=120,
            codec="avc1",
        )
    )
    return Report(
        clip_id=extra.pop("clip_id", "clip"),
        instruction=extra.pop("instruction", "put the block away"),
        clip=clip,
        events=events,
        assessment=Assessment(
            mode="graph",
            assessed=["physical_plausibility", "visual_quality"],
            not_assessed=["task_progress"],
            incomplete=["seg1/visual_quality"],
            note="note",
        ),
        flags=["partial"],
        manifest=RunManifest(gaze_version="0", codebook_version="1", codebook_hash="sha256:x"),
        **extra,
    )


def test_everything_from_the_report_is_escaped_and_only_our_script_runs(tmp_path):
    report = report_for(
        None,
        [event(1, 2, description="the block <b>floats</b>", evidence=["t=1.0 s"])],
        4.0,
        clip_id="clip<1>",
        instruction="put <script>alert(1)</script> away",
        pa=JudgeScore(score=2, rationale="<i>floats</i>", subscores={"scene_consistency": 0}),
        rejected=[
            RejectedHypothesis(
                dimension="visual_quality",
                type="blur",
                start_s=0.5,
                end_s=1.0,
                confidence=0.2,
                reason="sharp <img src=x onerror=alert(2)>",
            )
        ],
    )
    html = render_html(report, tmp_path / "r.html")
    assert html.count("<script>") == 1 and "alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "the block &lt;b&gt;floats&lt;/b&gt;" in html and "&lt;i&gt;floats" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    assert not re.search(r"(src|href)=['\"]https?:", html), "no external requests"
    # a partial report says so before anything else, and the rejected are collapsed
    assert html.index("partial") < html.index("Timeline")
    assert "Not assessed (cannot be called clean): task_progress" in html
    assert "seg1/visual_quality" in html
    assert "<details><summary>1 hypothesis(es) rejected by the critic" in html
    assert "The clip could not be decoded" in html


def test_key_frames_are_the_frames_before_during_and_after_and_boxed(tmp_path):
    video = numbered_clip(tmp_path / "n.mp4", 40)
    region = EvidenceRegion(t_s=2.0, box=(0.1, 0.2, 0.3, 0.4), label="after")
    ev = event(1.5, 2.5, regions=[region], evidence=["the cup is gone at 3.2 s"])
    report = report_for(video, [ev], 4.0)
    html = render_html(report, tmp_path / "r.html")
    cards = re.findall(r'<section class="event".*?</section>', html, re.S)
    assert len(cards) == 1
    captions = re.findall(r"<figcaption>([^<]*)</figcaption>", cards[0])
    # before = start - 0.25 s, during = middle, after = end + 0.25 s, the boxed frame, the cited
    assert captions == [
        "before · 1.20 s",
        "during · box: after · 2.00 s",
        "after · 2.70 s",
        "cited · 3.20 s",
    ]
    # the box is drawn where the region says, on a 160x120 frame
    assert '<rect x="16.0" y="24.0" width="32.0" height="24.0"' in cards[0]
    assert "../n.mp4" not in html and "src='n.mp4'" in html  # relative to the page


def test_grabbed_frames_are_the_frames_sampling_uses(tmp_path):
    video = numbered_clip(tmp_path / "n.mp4", 50)
    decoded = open_clip(video, SamplingSettings())
    sampled = [t for w in decoded.windows for t in w.timestamps_s]
    stills = grab_stills(video, [(t, (64, 64)) for t in sampled] + [(9.0, (64, 64))], FPS)
    for t in sampled:
        assert stills[(t, (64, 64))].t_s == pytest.approx(t)
        assert frame_number(stills[(t, (64, 64))].jpeg) == round(t * FPS)
    assert frame_number(stills[(9.0, (64, 64))].jpeg) == round(sampled[-1] * FPS)  # past the end
    assert grab_stills(tmp_path / "missing.mp4", [(0.0, (64, 64))], FPS) == {}


def test_keyframe_plan_merges_frames_and_keeps_boxed_ones_first():
    ev = event(0.0, 0.05, regions=[EvidenceRegion(t_s=0.0, box=(0, 0, 1, 1), label="before")])
    plan = event_keyframes(ev, duration_s=1.0, fps=20)
    assert [(k.role, k.t_s) for k in plan] == [
        ("before", 0.0),
        ("during", 0.025),
        ("after", 0.3),
        ("box: before", 0.0),
    ]
    merged = merge_frames(plan, lambda t: round(t * 20) / 20)
    assert [(f.role, f.t_s, len(f.boxes)) for _, f in merged] == [
        ("before · during · box: before", 0.0, 1),
        ("after", 0.3, 0),
    ]
    many = [KeyFrame(t / 10, "cited") for t in range(8)] + [KeyFrame(0.75, "box", [])]
    many[-1].boxes.append(plan[3].boxes[0])
    kept = merge_frames(many, lambda t: t)
    assert len(kept) == 6 and any(f.boxes for _, f in kept)
    assert cited_times(["frames 3.2 s and 12s, not 3.2.1 s or 99 s", "t=0.5 s"], 20) == [3.2, 12]


def test_a_sixty_second_clip_stays_under_two_megabytes(tmp_path):
    """The size budget: a 60 s textured 640x480 clip with 20 events, video linked not inlined."""
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (480, 640, 3), dtype=np.uint8)
    frames = [np.roll(base, 3 * k, axis=1) for k in range(600)]
    video = tmp_path / "long.mp4"
    encode(frames, video, FPS, "h264", "low")
    events = [event(3.0 * i, 3.0 * i + 1.0) for i in range(20)]
    report = report_for(video, events, 60.0)
    page = tmp_path / "long.html"
    html = render_html(report, page)
    size = len(html.encode())
    assert size < 2_000_000, size
    assert html.count('class="kf"') >= 60  # every event has its three frames
    assert html.count("<figure data-t=") == 240  # every sampled frame at 4 fps
    embedded = render_html(report, page, embed_video=True)
    assert "src='data:video/mp4;base64," in embedded
    assert len(embedded) > size + video.stat().st_size


def test_drawdown_spans_mark_where_progress_falls_below_its_peak():
    assert drawdown_spans([0.1, 0.5, 0.4, 0.3, 0.6, 0.6, 0.55]) == [(1, 3), (5, 6)]
    assert drawdown_spans([0.0, 0.5, 1.0]) == []


def test_progress_curve_shares_the_timeline_axis(tmp_path):
    curve = ProgressCurve(
        times_s=[0, 1, 2, 3], raw=[0, 60, 30, 100], processed=[0, 0.6, 0.3, 1.0], metrics={}
    )
    html = render_html(report_for(None, [], 4.0, progress=curve), tmp_path / "r.html")
    axes = re.findall(r'<svg class="axis" data-x0="([^"]+)" data-x1="([^"]+)"', html)
    assert len(axes) == 2 and axes[0] == axes[1]
    assert "100 %" in html and 'class="drawdown"' in html


def test_diagnose_writes_html_next_to_json(tmp_path):
    html, out = tmp_path / "r.html", tmp_path / "r.json"
    assert run(["diagnose", "--demo", "--html", str(html), "--out", str(out)]) == 0
    text = html.read_text()
    assert text.startswith("<!doctype html>") and "camera_instability" in text
    cards = re.findall(r'<section class="event".*?</section>', text, re.S)
    assert cards and all(card.count('class="kf"') >= 3 for card in cards)
    assert out.exists()


def test_embed_video_needs_html(capsys):
    assert run(["diagnose", "--demo", "--embed-video"]) == 2
    assert "--embed-video needs --html" in capsys.readouterr().err


@pytest.mark.parametrize("duration", [0.8, 8.0, 60.0, 600.0])
def test_timeline_labels_never_overlap_at_any_length(duration):
    """Many events, long type names, crowded at the start and the end: within a lane no two
    bars-with-labels share a row's space, and every label stays inside the chart."""
    from gaze.report.svg import WIDTH, TimeAxis, label_width, pack_lane, tick_step

    axis = TimeAxis(duration)
    rng = np.random.default_rng(int(duration * 10))
    events = []
    for i in range(40):
        start = float(rng.uniform(0, duration))
        if i % 5 == 0:
            start = duration * (0.98 if i % 2 else 0.0)
        end = min(duration, start + float(rng.uniform(0, duration / 8)))
        events.append(
            (i, event(start, end, "grasp_without_visible_support" if i % 3 else "object_floating"))
        )
    placed = pack_lane(events, axis)
    assert sorted(p.event_index for p in placed) == list(range(40))
    for p in placed:
        lo, hi = p.extent
        assert lo >= 0 and hi <= WIDTH, (lo, hi)
        assert hi - lo >= label_width(p.text)
    for row in {p.row for p in placed}:
        spans = sorted(p.extent for p in placed if p.row == row)
        for (_, end), (start, _) in zip(spans, spans[1:], strict=False):
            assert end < start
    assert 3 <= duration / tick_step(duration) <= 10


def test_tracked_boxes_are_drawn_only_on_frames_shown_anyway():
    from gaze.report.keyframes import Box

    box = Box((0.1, 0.1, 0.2, 0.2), "track: after")
    frames = [
        KeyFrame(0.0, "before"),
        KeyFrame(0.0, "box: track: after", [box], optional=True),
        KeyFrame(0.5, "box: track: after", [box], optional=True),
    ]
    merged = merge_frames(frames, lambda t: t)
    assert [(f.t_s, f.role, f.boxes) for _, f in merged] == [(0.0, "before", [box])]
