"""The run viewer in a real headless Chromium: from disk and from `--serve`'s server, no console
errors, filters and sorting that change the tables, the comparison's filter, click-to-seek over
HTTP ranges, and screenshots at 1280 px and 390 px."""

from __future__ import annotations

import csv
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
    server = site_server(site.folder, site.pages, site.videos)
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
        # a page written after the server started (a site rebuilt beside it) is served
        page = site.folder / "clips" / "forge2_s5_0001_teleportation.html"
        later = site.folder / "clips" / "written-after-start.html"
        later.write_text(page.read_text())
        try:
            answer = watched.page.goto(server.url(later))
            assert answer is not None and answer.status == 200
            assert watched.page.locator("h1").inner_text() == "forge2_s5_0001_teleportation"
        finally:
            later.unlink()
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


def test_at_1400_px_every_column_shows_and_tables_export_what_they_show(
    site, browser_page, tmp_path
):
    watched = browser_page(1400)
    page = watched.page
    page.goto(site.index.as_uri())
    for table in ("leaderboard", "clips"):
        # no column is cut off: the table fits its box, the last header is on screen
        fits = page.evaluate(
            f"(() => {{ const t = document.getElementById('{table}'); "
            "return t.parentNode.scrollWidth <= t.parentNode.clientWidth + 1; })()"
        )
        assert fits, f"#{table} is wider than the page at 1400 px"
        right = page.evaluate(
            f"document.querySelector('#{table} thead th:last-child').getBoundingClientRect().right"
        )
        assert right <= 1400
    heads = page.evaluate("[...document.querySelectorAll('#leaderboard th')].map(t => t.innerText)")
    assert any("severe_event_recall" in h for h in heads) and any("sev_at_1" in h for h in heads)
    watched.screenshot(tmp_path / "index-1400.png")
    # the clips table exports the rows shown, numbers as numbers
    page.select_option("select[name=type]", "blur")
    shown = page.evaluate(f"{VISIBLE_ROWS}.length")
    with page.expect_download() as download:
        page.click("#clips >> xpath=../preceding-sibling::button[1]")
    rows = list(csv.reader(download.value.path().read_text(encoding="utf-8").splitlines()))
    assert download.value.suggested_filename == "clips.csv"
    assert rows[0][:4] == ["clip", "generator", "duration (s)", "events"]
    assert len(rows) == 1 + shown
    durations = [row[2] for row in rows[1:]]
    assert all(float(d) > 0 for d in durations)
    # sorting by duration orders the rows by their values
    page.click("#clips th:has-text('duration')")
    values = page.evaluate(f"{VISIBLE_ROWS}.map(r => +r.cells[2].dataset.v)")
    assert values == sorted(values, reverse=True)
    # the plots: a bar pair per type, a timeline row per clip
    rates = page.evaluate(
        "[...document.querySelectorAll('g.type-rate')].map(g => [g.dataset.type, g.dataset.recall])"
    )
    assert ["blur", "1.0000"] in rates or any(t == "blur" for t, _ in rates)
    assert page.locator("svg.runline a.clip-row").count() == 24
    assert watched.errors == []


def test_previous_and_next_walk_the_run_by_keyboard(site, browser_page):
    watched = browser_page(1280)
    page = watched.page
    page.goto(site.index.as_uri())
    expected = page.evaluate(
        "[...document.querySelectorAll('#clips tbody tr a')].map(a => a.textContent)"
    )
    page.click(f"#clips a:text-is('{expected[0]}')")
    walked = [page.locator("h1").inner_text()]
    for _ in expected[1:]:
        with page.expect_navigation():
            page.keyboard.press("]")
        walked.append(page.locator("h1").inner_text())
    assert walked == expected
    assert page.locator("#next").count() == 0  # the last clip has no next
    with page.expect_navigation():
        page.keyboard.press("[")
    assert page.locator("h1").inner_text() == expected[-2]
    with page.expect_navigation():
        page.keyboard.press("u")
    assert page.url.endswith("/index.html")
    assert watched.errors == []


def test_a_clip_page_shows_its_model_exchanges_and_scrubs_by_dragging(site, runs, browser_page):
    from gaze.models.transcript import read_transcript

    clip = "forge2_s5_0001_teleportation"
    _, exchanges = read_transcript(runs.graph / "transcripts" / f"{clip}.jsonl")
    watched = browser_page(1280)
    page = watched.page
    page.set_viewport_size({"width": 1280, "height": 2400})  # the chart below the player
    page.goto((site.folder / "clips-2" / f"{clip}.html").as_uri())
    # dragging along the timeline moves the video's time with the pointer
    chart = page.locator("svg.axis").first
    box = chart.bounding_box()
    x0, x1 = (
        float(page.evaluate(f"document.querySelector('svg.axis').dataset.{k}"))
        for k in ("x0", "x1")
    )
    scale = box["width"] / float(
        page.evaluate("document.querySelector('svg.axis').viewBox.baseVal.width")
    )
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + (x0 + 5) * scale, y)
    page.mouse.down()
    times = []
    for fraction in (0.25, 0.5, 0.75):
        page.mouse.move(box["x"] + (x0 + (x1 - x0) * fraction) * scale, y)
        times.append(float(page.evaluate("document.body.dataset.sought")))
    page.mouse.up()
    assert times == sorted(times) and times[0] < times[-1]
    assert page.locator("li.exchange").count() == len(exchanges) > 0
    roles = [x["role"] for x in exchanges]
    assert (
        page.evaluate("[...document.querySelectorAll('li.exchange')].map(l => l.dataset.role)")
        == roles
    )
    page.select_option("#x-role", "critic")
    visible = page.evaluate(
        "[...document.querySelectorAll('li.exchange')].filter(l => !l.hidden).length"
    )
    assert visible == roles.count("critic") > 0
    critic = page.locator("li.exchange:not([hidden]) summary").first
    critic.click()
    assert "read as CriticOutput" in page.locator("li.exchange:not([hidden])").first.inner_text()
    assert watched.errors == []
