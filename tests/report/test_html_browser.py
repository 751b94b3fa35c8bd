"""The per-clip HTML page in a real headless Chromium: it loads from disk with no console error
and no request leaving the page's folder, every event shows its frames, clicking an event seeks
the video and moves the cursor, and it lays out at 1280 px and at a phone's 390 px."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gaze.bench.forge2.forge import forge_set
from gaze.cli.main import run


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("page")
    rows = forge_set(folder, 2, seed=7, max_side=320, kinds=("teleportation", "hallucination"))
    page = folder / "pages" / "report.html"
    page.parent.mkdir()
    video = folder / rows[0].video
    code = run(
        [
            "diagnose",
            str(video),
            "-i",
            rows[0].instruction,
            "--html",
            str(page),
            "--out",
            str(folder / "report.json"),
        ]
    )
    assert code == 0
    return page, json.loads((folder / "report.json").read_text())


def test_page_loads_offline_and_every_event_has_its_frames(diagnosed, browser_page):
    page_file, report = diagnosed
    assert report["events"], "the forged teleportation must be found for this test to mean much"
    watched = browser_page(1280)
    watched.page.goto(page_file.as_uri())
    watched.page.wait_for_function("document.getElementById('player').readyState >= 1")
    assert watched.errors == []
    assert all(url.startswith(("file://", "data:")) for url in watched.requests)
    cards = watched.page.locator("section.event")
    assert cards.count() == len(report["events"])
    for i in range(cards.count()):
        frames = cards.nth(i).locator("figure.kf image")
        assert frames.count() >= 3
        assert frames.first.get_attribute("href").startswith("data:image/jpeg;base64,")
    regions = sum(len(e["regions"]) for e in report["events"])
    assert watched.page.locator("figure.kf rect").count() >= min(regions, 1)


def test_clicking_an_event_seeks_the_video_and_moves_the_cursor(diagnosed, browser_page):
    page_file, report = diagnosed
    watched = browser_page(1280)
    watched.page.goto(page_file.as_uri())
    watched.page.wait_for_function("document.getElementById('player').readyState >= 1")
    first = sorted(report["events"], key=lambda e: (e["start_s"], e["end_s"]))[0]
    watched.page.click("#ev-0 button.seek")
    watched.page.wait_for_function("!document.getElementById('player').seeking")
    now = watched.page.evaluate("document.getElementById('player').currentTime")
    assert now == pytest.approx(first["start_s"], abs=1e-3)
    cursor = watched.page.evaluate(
        "(() => { const s = document.querySelector('svg.axis');"
        " return [+s.querySelector('.cursor').getAttribute('x1'), +s.dataset.x0, +s.dataset.x1,"
        " +s.dataset.duration]; })()"
    )
    x, x0, x1, duration = cursor
    assert x == pytest.approx(x0 + (x1 - x0) * first["start_s"] / duration, abs=0.01)
    assert "active" in watched.page.get_attribute("#ev-0", "class")
    # and the other way: playing the video from elsewhere moves the cursor there
    watched.page.evaluate("document.getElementById('player').currentTime = 0.5")
    watched.page.wait_for_function(
        "Math.abs(+document.querySelector('svg.axis .cursor').getAttribute('x1') - "
        f"{x0 + (x1 - x0) * 0.5 / duration}) < 0.01"
    )
    assert watched.errors == []


@pytest.mark.parametrize("width", [1280, 390])
def test_page_lays_out_at_desktop_and_phone_width(diagnosed, browser_page, tmp_path, width):
    page_file, _ = diagnosed
    watched = browser_page(width)
    watched.page.goto(page_file.as_uri())
    shot = tmp_path / f"report-{width}.png"
    overflow = watched.screenshot(shot)
    assert shot.stat().st_size > 10_000
    assert overflow <= 0, "the page itself never scrolls sideways (wide charts scroll inside)"
    assert watched.errors == []


@pytest.mark.parametrize("source", ["demo", "forge"])
def test_the_demo_and_a_default_forge_clip_play_in_the_browser(source, browser_page, tmp_path):
    """`gaze diagnose --demo --html` (the first page a newcomer opens) and a clip `gaze forge`
    writes by default play: H.264, which Chromium decodes (the shipped demo and forge v1's .mp4
    were MPEG-4 Part 2, and the page said "This browser cannot play the video")."""
    page = tmp_path / "page.html"
    if source == "demo":
        args = ["diagnose", "--demo", "--html", str(page)]
    else:
        assert run(["forge", str(tmp_path / "f"), "--count", "1"]) == 0
        clip = next((tmp_path / "f").glob("*.mp4"))
        args = ["diagnose", str(clip), "-i", "pick", "--html", str(page)]
    assert run(args) == 0
    watched = browser_page(1280)
    watched.page.goto(page.as_uri())
    watched.page.wait_for_function(
        "(() => { const v = document.getElementById('player');"
        " return v.error !== null || v.readyState >= 2; })()"
    )
    state = watched.page.evaluate(
        "(() => { const v = document.getElementById('player');"
        " return [v.error && v.error.code, v.videoWidth]; })()"
    )
    assert state == [None, 320]
