"""The self-contained HTML report: everything escaped, no scripts, events and judges shown."""

from __future__ import annotations

from gaze.cli.main import run
from gaze.report.html import render_html
from gaze.schema.events import Event
from gaze.schema.report import Assessment, JudgeScore, ProgressCurve, Report, RunManifest


def report(description: str = "the block <b>floats</b>") -> Report:
    return Report(
        clip_id="clip<1>",
        instruction="put <script>alert(1)</script> away",
        events=[
            Event(
                dimension="physical_plausibility",
                type="object_floating",
                start_s=1.0,
                end_s=2.0,
                severity=4,
                description=description,
                evidence=["t=1.0 s"],
                confidence=0.8,
            )
        ],
        assessment=Assessment(mode="graph", assessed=[], not_assessed=[], note="note"),
        pa=JudgeScore(score=2, rationale="floats", subscores={"scene_consistency": 0}),
        progress=ProgressCurve(
            times_s=[0, 1, 2],
            raw=[0, 50, 100],
            processed=[0.0, 0.5, 1.0],
            metrics={"MP": 1.0, "DRR": None},
        ),
        consistency=["PA 2: consistent with 1 physical/entity event(s)"],
        manifest=RunManifest(gaze_version="0", codebook_version="1", codebook_hash="sha256:x"),
    )


def test_html_escapes_everything_and_has_no_scripts():
    html = render_html(report())
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "the block &lt;b&gt;floats&lt;/b&gt;" in html
    assert "object_floating" in html and "Physical adherence (PA): 2/5" in html
    assert 'aria-label="event timeline"' in html and 'aria-label="progress curve"' in html
    assert "PA 2: consistent" in html


def test_diagnose_writes_html_next_to_json(tmp_path, capsys):
    html, out = tmp_path / "r.html", tmp_path / "r.json"
    assert run(["diagnose", "--demo", "--html", str(html), "--out", str(out)]) == 0
    text = html.read_text()
    assert text.startswith("<!doctype html>") and "camera_instability" in text
    assert out.exists()
