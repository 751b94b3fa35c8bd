"""The run viewer in a real headless Chromium: from disk and from `--serve`'s server, no console
errors, filters and sorting that change the tables, the comparison's filter, click-to-seek over
HTTP ranges, and screenshots at 1280 px and 390 px."""

from __future__ import annotations

import json

import pytest

from gaze.view.serve import site_server
from gaze.view.site import build_site

VISIBLE_ROWS = "[...document.querySelectorAll('#clips tbody tr')].filter(r => !r.hidden)"


@pytest.fixture(scope="module")
def site(runs, tmp_path_factory):
    return build_site([runs.pixel, runs.graph], tmp_path_factory.mktemp("site") / "view")


def test_clip_table_filters_and_leaderboard_sorts(site, browser_page):
    watched = browser_page(1280)
    watched.page.goto(site.index.as_uri())
    page = watched.page
    assert page.locator("#shown").inner_text() == "24 of 24 clips shown"
    page.select_option("select[name=type]", "blur")
    types = page.evaluate(f"{VISIBLE_ROWS}.map(r => r.dataset.types)")
    assert types and all("blur" in t.split("|") for t in types) and len(types) < 24
    assert page.locator("#shown").inner_text() == f"{len(types)} of 24 clips shown"
    page.select_option("select[name=type]", "")
    page.select_option("select[name=severity]", "4")
    severe = page.evaluate(f"{VISIBLE_ROWS}.map(r => +r.dataset.sev)")
    assert severe and all(s >= 4 for s in severe) and len(severe) < 24
    page.select_option("select[name=severity]", "")
    page.fill("input[name=text]", "teleportation")
    # the text filter searches each clip's id, instruction and event types
    shown = page.evaluate(f"{VISIBLE_ROWS}.map(r => r.dataset.text)")
    hidden = page.evaluate(
        "[...document.querySelectorAll('#clips tbody tr')].filter(r => r.hidden)"
        ".map(r => r.dataset.text)"
    )
    assert shown and all("teleportation" in t for t in shown)
    assert hidden and not any("teleportation" in t for t in hidden)
    # sorting the leaderboard by recall puts the best first
    page.click("#leaderboard th:has-text('recall')")
    first = page.evaluate("+document.querySelector('#leaderboard tbody tr').cells[3].dataset.v")
    values = page.evaluate(
        "[...document.querySelectorAll('#leaderboard tbody tr')].map(r => +r.cells[3].dataset.v)"
    )
    assert first == max(values) > 0
    assert watched.errors == []


def test_comparison_filter_keeps_clips_where_the_runs_differ(site, browser_page):
    watched = browser_page(1280)
    watched.page.goto((site.folder / "compare.html").as_uri())
    rows = "document.querySelectorAll('#compare tbody tr')"
    total = watched.page.evaluate(f"{rows}.length")
    watched.page.check("#only-differ")
    shown = watched.page.evaluate(f"[...{rows}].filter(r => !r.hidden).map(r => r.dataset.differs)")
    assert 0 < len(shown) < total and set(shown) == {"1"}
    assert watched.errors == []


def test_served_clip_page_seeks_through_http_ranges(site, runs, browser_page):
    server = site_server(site.pages, site.videos)
    server.start()
    try:
        report = json.loads(
            (runs.pixel / "reports" / "forge2_s5_0001_teleportation.json").read_text()
        )
        watched = browser_page(1280)
        statuses: list[int] = []
        watched.page.on(
            "response", lambda r: statuses.append(r.status) if "/forge/" in r.url else None
        )
        watched.page.goto(server.url(site.folder / "clips" / "forge2_s5_0001_teleportation.html"))
        watched.page.wait_for_function("document.getElementById('player').readyState >= 1")
        assert watched.page.locator("section.event figure.kf").count() >= 3 * len(report["events"])
        watched.page.click("#ev-0 button.seek")
        watched.page.wait_for_function("!document.getElementById('player').seeking")
        now = watched.page.evaluate("document.getElementById('player').currentTime")
        assert now == pytest.approx(report["events"][0]["start_s"], abs=1e-3)
        assert 206 in statuses  # the browser fetched the video in ranges
        assert watched.errors == []
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("name", ["index.html", "compare.html"])
def test_viewer_pages_lay_out_at_desktop_and_phone_width(site, browser_page, tmp_path, width, name):
    watched = browser_page(width)
    watched.page.goto((site.folder / name).as_uri())
    shot = tmp_path / f"{name}-{width}.png"
    overflow = watched.screenshot(shot)
    assert shot.stat().st_size > 10_000
    assert overflow <= 0, "wide tables scroll inside their box, never the page"
    assert watched.errors == []
