"""Serving the viewer on 127.0.0.1: byte ranges as RFC 9110 states them, and nothing served but
the site's pages and the videos they link."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gaze.view.serve import byte_range, site_server
from gaze.view.site import build_site


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, None),
        ("bytes=0-99", (0, 99)),
        ("bytes=100-", (100, 999)),
        ("bytes=-10", (990, 999)),
        ("bytes=900-5000", (900, 999)),
        ("bytes=1000-", "unsatisfiable"),
        ("bytes=5-4", "unsatisfiable"),
        ("bytes=-0", "unsatisfiable"),
        ("bytes=0-1,5-6", None),  # several ranges: the whole file instead
        ("items=0-1", None),
    ],
)
def test_byte_ranges(header, expected):
    assert byte_range(header, 1000) == expected


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.fixture(scope="module")
def served(runs, tmp_path_factory):
    site = build_site([runs.pixel], tmp_path_factory.mktemp("served") / "site")
    server = site_server(site.folder, site.pages, site.videos)
    server.start()
    yield server, site
    server.shutdown()
    server.server_close()


def test_videos_are_served_in_ranges(served, runs):
    server, site = served
    video = site.videos[0]
    data = video.read_bytes()
    url = server.url(video)
    status, headers, body = fetch(url, {"Range": "bytes=100-299"})
    assert status == 206 and body == data[100:300]
    assert headers["Content-Range"] == f"bytes 100-299/{len(data)}"
    assert headers["Accept-Ranges"] == "bytes" and headers["Content-Type"].startswith("video/")
    status, _, body = fetch(url, {"Range": "bytes=-50"})
    assert status == 206 and body == data[-50:]
    status, headers, _ = fetch(url, {"Range": f"bytes={len(data)}-"})
    assert status == 416 and headers["Content-Range"] == f"bytes */{len(data)}"
    status, _, body = fetch(url)
    assert status == 200 and body == data


def test_only_the_site_and_its_videos_are_served(served, runs):
    server, site = served
    status, _, body = fetch(server.url(site.index))
    assert status == 200 and body.startswith(b"<!doctype html>")
    manifest = runs.forge / "manifest.jsonl"  # beside the videos, but not part of the site
    assert fetch(server.url(manifest))[0] == 404
    base = server.url(site.index).rsplit("/", 1)[0]
    assert fetch(f"{base}/../../../etc/passwd")[0] == 404
    assert fetch(f"{base}/%2e%2e/%2e%2e/etc/passwd")[0] == 404
    assert Path(server.root) in site.index.resolve().parents


def test_pages_written_after_the_server_started_are_served(served, runs, tmp_path):
    """A page added to the site, and a site rebuilt in place while the server runs (its new
    videos included), are served; a file beside the videos still is not."""
    server, site = served
    later = site.folder / "clips" / "written-later.html"
    later.write_text("<!doctype html><p>later</p>")
    status, _, body = fetch(server.url(later))
    assert status == 200 and body.endswith(b"later</p>")
    # a video no page links yet, within the server's root (the runs are shared: not beside them)
    other = tmp_path / "other.mp4"
    other.write_bytes((runs.forge / site.videos[0].name).read_bytes())
    assert Path(server.root) in other.parents
    assert fetch(server.url(other))[0] == 404
    listed = json.loads((site.folder / "media.json").read_text())
    (site.folder / "media.json").write_text(json.dumps([*listed, str(other)]))
    assert fetch(server.url(other))[0] == 200
    assert fetch(server.url(runs.forge / "manifest.jsonl"))[0] == 404
