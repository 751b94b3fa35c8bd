"""`gaze review` in a real headless Chromium: step frames, accept one event, edit another's span
by the keyboard, add one, reload and find every decision kept, and the labels file equal to the
manifest those decisions make; then the review's bad input."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from gaze.bench.inputs import load_manifest
from gaze.view.review_clips import review_clips
from gaze.view.review_page import review_page
from gaze.view.review_server import ReviewServer
from gaze.view.review_store import ReviewStore
from tests.cli.test_cli import one_line_error


@pytest.fixture
def served(runs, tmp_path):
    """The pixel run, one clip of which had a second event proposed (a blur the method saw)."""
    run = tmp_path / "run"
    shutil.copytree(runs.pixel, run, ignore=shutil.ignore_patterns("view", "*.html"))
    reports = sorted((run / "reports").glob("*.json"))
    report = next(p for p in reports if "teleport" in p.name)
    data = json.loads(report.read_text())
    blur = {
        "dimension": "visual_quality", "type": "blur", "start_s": 2.0, "end_s": 3.0,
        "severity": 2.0, "description": "the picture softens", "evidence": ["sharpness 0.4"],
        "confidence": 0.6,
    }  # fmt: skip
    data["events"] = [*data["events"], blur][:2]
    report.write_text(json.dumps(data))
    labels = tmp_path / "labels.jsonl"
    clips = review_clips(run)
    store = ReviewStore(labels, clips, "tester")
    server = ReviewServer(store, review_page())
    server.start()
    yield server, store, labels
    server.shutdown()
    server.server_close()


def _wait_for_state(page, revision: int, timeout_s: float = 30.0) -> None:
    """Poll the server until it has recorded ``revision`` decisions. Not ``wait_for_function``:
    Playwright takes a predicate's promise as truthy once it settles, whatever its value, so
    a promise-returning predicate is evaluated once and never waits."""
    deadline = time.monotonic() + timeout_s
    while True:
        seen = page.evaluate("fetch('/api/state').then(r => r.json()).then(s => s.revision)")
        if seen >= revision:
            return
        assert time.monotonic() < deadline, f"the server stayed at revision {seen} < {revision}"
        time.sleep(0.02)


def _frame(page) -> int:
    return int(page.locator("#frame").inner_text())


def test_a_person_reviews_a_clip_and_the_labels_are_the_manifest_it_makes(served, browser_page):
    server, store, labels = served
    # a clip with two proposed events or more (the fewest such)
    index, clip = min(
        (
            (i, store.clips[c])
            for i, c in enumerate(store.order)
            if len(store.clips[c].proposed) > 1
        ),
        key=lambda pair: len(pair[1].proposed),
    )
    watched = browser_page(1280)
    page = watched.page
    page.goto(server.url)
    page.wait_for_selector("#clip-list li")
    page.click(f"#clip-list li:nth-child({index + 1})")
    assert page.locator("#clip-title").inner_text() == clip.clip_id
    # each proposed event with its evidence and its frames before, during and after
    page.wait_for_function(
        "document.querySelectorAll('#proposed .kf img').length === " + str(3 * len(clip.proposed))
    )
    assert page.locator("#proposed li").first.locator("ul li").count() == len(
        clip.proposed[0].evidence
    )
    page.wait_for_function("document.getElementById('player').readyState >= 1")
    # frame-exact stepping
    start = _frame(page)
    for _ in range(3):
        page.keyboard.press(".")
    page.wait_for_function(f"+document.getElementById('frame').textContent === {start + 3}")
    page.keyboard.press(",")
    page.wait_for_function(f"+document.getElementById('frame').textContent === {start + 2}")
    # accept the first proposed event
    page.keyboard.press("a")
    _wait_for_state(page, 1)
    page.wait_for_selector("#proposed li.accepted")
    # the second: its end moved by the keyboard to two frames after its start
    page.keyboard.press("n")
    page.wait_for_function("!document.getElementById('player').seeking")
    page.keyboard.press("e")
    page.wait_for_selector("#editor:not([hidden])")
    shown_from = _frame(page)
    page.keyboard.press(".")
    page.keyboard.press(".")
    page.wait_for_function(f"+document.getElementById('frame').textContent === {shown_from + 2}")
    page.keyboard.press("e")  # the end at this frame
    end_s = float(page.input_value("#editor input[name=end_s]"))
    assert end_s == pytest.approx((shown_from + 2) / clip.fps, abs=1e-3)
    page.keyboard.press("Enter")
    _wait_for_state(page, 2)
    page.wait_for_selector("#editor", state="hidden")
    # one the method missed
    page.keyboard.press("+")
    page.wait_for_selector("#editor:not([hidden])")
    page.select_option("#editor select[name=type]", "blur")
    page.fill("#editor input[name=start_s]", "0.5")
    page.fill("#editor input[name=end_s]", "1.5")
    page.fill("#editor input[name=description]", "soft focus on the cup")
    page.click("#save")
    _wait_for_state(page, 3)
    for extra in range(2, len(clip.proposed)):  # any further proposal: a duplicate
        page.keyboard.press("n")
        page.keyboard.press("r")
        page.keyboard.press("4")
        _wait_for_state(page, 1 + extra + 1)
    decided = 1 + len(clip.proposed)
    # closing the page loses nothing: a new page shows every decision
    page.reload()
    page.wait_for_selector("#clip-list li")
    page.click(f"#clip-list li:nth-child({index + 1})")
    assert page.locator("#proposed li.accepted").count() == 1
    assert page.locator("#proposed li.edited").count() == 1
    assert page.locator("#added li").count() == 1
    page.keyboard.press("d")  # done: every proposed event decided
    _wait_for_state(page, decided + 1)
    # the labels: a manifest with exactly those events, each with its provenance
    (row,) = [json.loads(line) for line in labels.read_text().splitlines()]
    accepted, edited = (e.model_dump(mode="json", exclude_defaults=True) for e in clip.proposed[:2])
    accepted.pop("confidence", None)
    edited.pop("confidence", None)
    edited["end_s"] = end_s
    added = {
        "dimension": "visual_quality", "type": "blur", "start_s": 0.5, "end_s": 1.5,
        "severity": 3.0, "description": "soft focus on the cup",
    }  # fmt: skip
    expected = sorted([accepted, edited, added], key=lambda e: (e["start_s"], e["end_s"]))
    assert row["events"] == expected
    review = row["metadata"]["review"]
    assert review["status"] == "done" and review["annotator"] == "tester"
    said = {e["description"]: p for e, p in zip(row["events"], review["provenance"], strict=True)}
    assert said["soft focus on the cup"] == {"from": "hand", "as": "added"}
    assert {p["as"] for p in review["provenance"]} == {"accepted", "edited", "added"}
    # the labels are a manifest gaze reads, the video found from the labels' folder
    (read,) = load_manifest(labels, for_diagnosis=False)
    assert (labels.parent / read.video).resolve() == clip.video.resolve()
    log = [
        json.loads(line) for line in labels.with_name("labels.jsonl.log").read_text().splitlines()
    ]
    assert [e["action"] for e in log] == ["accept", "edit", "add", "status"]
    assert all(e["annotator"] == "tester" and e["at"] for e in log)
    assert watched.errors == []


def test_two_pages_on_one_review_never_overwrite_each_other(served, browser_page):
    server, store, _ = served
    first, second = browser_page(1280).page, browser_page(1280).page
    for page in (first, second):
        page.goto(server.url)
        page.wait_for_selector("#clip-list li")
    index = next(i for i, c in enumerate(store.order) if store.clips[c].proposed)
    for page in (first, second):
        page.click(f"#clip-list li:nth-child({index + 1})")
    first.keyboard.press("a")
    _wait_for_state(first, 1)
    second.keyboard.press("r")
    second.keyboard.press("2")  # reject: wrong type, on a view from before the first's accept
    second.wait_for_function(
        "document.getElementById('message').textContent.includes('another page decided')"
    )
    assert store.revision == 1 and store.state[store.order[index]].decisions[0]["decision"] == (
        "accept"
    )


def test_bad_input_is_one_line_and_loses_nothing(runs, tmp_path, capsys):
    from gaze.cli.main import run

    # a labels file edited by hand into invalid JSON: refused, left as it is
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"clip_id": "x", broken\n')
    (tmp_path / "labels.jsonl.log").write_text("")
    before = labels.read_bytes()
    code = run(["review", str(runs.pixel), "--out", str(labels), "--annotator", "a"])
    assert code == 2 and labels.read_bytes() == before
    assert "is not a manifest row" in one_line_error(capsys.readouterr().err)
    # a manifest of the user's that is no review's labels is never written over
    own = runs.forge / "manifest.jsonl"
    before = own.read_bytes()
    assert run(["review", str(runs.pixel), "--out", str(own), "--annotator", "a"]) == 2
    assert "no decision log" in one_line_error(capsys.readouterr().err)
    assert own.read_bytes() == before
    # a run folder one of whose videos is gone
    copy = tmp_path / "run"
    shutil.copytree(runs.pixel, copy, ignore=shutil.ignore_patterns("view", "*.html"))
    rows = [json.loads(line) for line in (runs.forge / "manifest.jsonl").read_text().splitlines()]
    for row in rows:
        row["video"] = str(runs.forge / row["video"])
    rows[3]["video"] = str(tmp_path / "moved-away.mp4")
    moved = tmp_path / "moved.jsonl"
    moved.write_text("".join(json.dumps(r) + "\n" for r in rows))
    info = json.loads((copy / "run.json").read_text())
    (copy / "run.json").write_text(json.dumps({**info, "manifest": str(moved)}))
    out = tmp_path / "l1.jsonl"
    assert run(["review", str(copy), "--out", str(out), "--annotator", "a"]) == 2
    error = one_line_error(capsys.readouterr().err)
    assert "1 of 24 clips have no video" in error and rows[3]["clip_id"] in error
    assert not out.exists()
    # a manifest whose videos are gone
    manifest = tmp_path / "m.jsonl"
    row = json.loads((runs.forge / "manifest.jsonl").read_text().splitlines()[0])
    row["video"] = str(tmp_path / "gone.mp4")
    manifest.write_text(json.dumps(row) + "\n")
    code = run(["review", str(manifest), "--out", str(tmp_path / "l2.jsonl"), "--annotator", "a"])
    assert code == 2 and not (tmp_path / "l2.jsonl").exists()
    assert "have no video" in one_line_error(capsys.readouterr().err)


def test_the_labels_score_and_convert_to_every_peer_format(runs, tmp_path):
    """Labels made by accepting every proposal: `bench score` of the run against them finds
    every event, and `convert --to` writes each peer format from them."""
    from gaze.cli.main import run

    labels = tmp_path / "labels.jsonl"
    store = ReviewStore(labels, review_clips(runs.pixel), "tester")
    revision = 0
    for clip_id in store.order:
        proposed = store.clips[clip_id].proposed
        for index in range(len(proposed)):
            revision = store.decide(clip_id, "accept", {"index": index}, revision)
        status = "done" if proposed else "clean"
        revision = store.decide(clip_id, "status", {"status": status}, revision)
    scores = tmp_path / "scores.json"
    args = ["bench", "score", str(labels), str(runs.pixel / "reports"), "--judge", "type"]
    assert run([*args, "--bootstrap", "0", "--out", str(scores)]) == 0
    result = json.loads(scores.read_text())
    assert result["n_clips"] == 24 and result["recall"] == result["precision"] == 1.0
    for peer in ("robogaze", "robogaze-code", "robojudge", "prm", "glide"):
        out = tmp_path / f"as-{peer}"
        assert run(["convert", str(labels), "--to", peer, "--out", str(out)]) == 0, peer
        assert out.exists()


def test_what_reviewing_taught_the_method(served, browser_page):
    """The summary counts each decision by type and by method, the rejection reasons and what
    was added by hand; its page shows them."""
    from gaze.view.review_summary import review_summary

    server, store, _ = served
    with_events = [c for c in store.order if store.clips[c].proposed]
    first, second = with_events[0], with_events[1]
    revision = store.decide(first, "accept", {"index": 0}, 0)
    revision = store.decide(second, "reject", {"index": 0, "reason": "wrong span"}, revision)
    added = {"dimension": "visual_quality", "type": "blur", "start_s": 1.0, "end_s": 2.0,
             "severity": 2, "description": "soft"}  # fmt: skip
    store.decide(first, "add", {"event": added}, revision)
    summary = review_summary(store)
    kinds = [store.clips[c].proposed[0].kind for c in (first, second)]
    decided = sum(v["decided"] for v in summary["by_type"].values())
    assert decided == 2 and summary["rejection_reasons"] == {"wrong span": 1}
    assert summary["added_by_type"] == {"blur": 1}
    if kinds[0] != kinds[1]:
        assert summary["by_type"][kinds[0]]["acceptance"] == 1.0
        assert summary["by_type"][kinds[1]]["acceptance"] == 0.0
    (method,) = summary["by_method"].values()
    assert method["accepted"] == 1 and method["rejected"] == 1 and method["acceptance"] == 0.5
    watched = browser_page(1280)
    watched.page.goto(server.url + "summary")
    text = watched.page.locator("body").inner_text()
    assert "wrong span: 1" in text and "blur: 1" in text and "50 %" in text
    assert watched.errors == []
