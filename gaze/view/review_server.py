"""``gaze review``'s server on 127.0.0.1: the review page, each clip's video (with HTTP ranges,
so the page can step frame by frame), the review's state as JSON, and decisions (POST), each
written to the log before the page hears back."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from gaze.report.keyframes import grab_stills
from gaze.schema.codebook import load_codebook
from gaze.view.review_page import summary_page
from gaze.view.review_store import ReviewStore
from gaze.view.review_summary import review_summary
from gaze.view.serve import send_file

STILL_SIDE = 160
"""Longest side of a key frame on the review page, pixels."""
MAX_BODY = 1 << 20
"""Largest decision a page may send (bytes)."""


def codebook_view() -> dict[str, Any]:
    """What the page shows of the codebook: each type with its dimension, definition and
    exclusion rule, and the severity rubric's anchors."""
    book = load_codebook().codebook
    return {
        "types": [
            {
                "name": t.name,
                "dimension": d.name,
                "definition": t.definition,
                "exclusion_rule": t.exclusion_rule,
                "default_severity": t.default_severity,
            }
            for d in book.dimensions
            for t in d.types
        ],
        "severity": [{"level": s.level, "label": s.label} for s in book.severity_rubric],
    }


class ReviewServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, store: ReviewStore, page: str, port: int = 0) -> None:
        self.store = store
        self.page = page.encode("utf-8")
        super().__init__(("127.0.0.1", port), _Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread

    def state(self) -> dict[str, Any]:
        store = self.store
        clips = []
        for index, clip_id in enumerate(store.order):
            clip, state = store.clips[clip_id], store.state[clip_id]
            clips.append(
                {
                    "clip_id": clip_id,
                    "video": f"/video/{index}",
                    "instruction": clip.instruction,
                    "fps": clip.fps,
                    "method": clip.method,
                    "proposed": [e.model_dump(mode="json") for e in clip.proposed],
                    "decisions": {str(k): v for k, v in state.decisions.items()},
                    "added": state.added,
                    "status": state.status,
                }
            )
        return {
            "revision": store.revision,
            "annotator": store.annotator,
            "labels": str(store.labels),
            "clips": clips,
        }


class _Handler(BaseHTTPRequestHandler):
    server: ReviewServer

    def log_message(self, format: str, *args: object) -> None:  # the CLI prints the URL
        return

    def _json(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 (the http.server naming)
        path = unquote(urlsplit(self.path).path)
        if path in ("/", "/index.html"):
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(self.server.page)))
            self.end_headers()
            self.wfile.write(self.server.page)
        elif path == "/api/state":
            with self.server.store.lock:
                self._json(200, self.server.state())
        elif path == "/api/codebook":
            self._json(200, codebook_view())
        elif path in ("/summary", "/api/summary"):
            with self.server.store.lock:
                summary = review_summary(self.server.store)
            if path == "/api/summary":
                self._json(200, summary)
                return
            page = summary_page(summary).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
        elif path.startswith("/stills/") and path[8:].isdigit():
            self._stills(int(path[8:]), urlsplit(self.path).query)
        elif path.startswith("/video/") and path[7:].isdigit():
            order = self.server.store.order
            index = int(path[7:])
            video = self.server.store.clips[order[index]].video if index < len(order) else None
            if video is None or not video.is_file():
                self.send_error(404, "no such video")
                return
            send_file(self, video)
        else:
            self.send_error(404, "not part of the review")

    def _stills(self, index: int, query: str) -> None:
        """The frames at the times asked (``?t=1.2,3.4``, at most 6) as JPEG data URIs, in one
        decoding pass: an event's key frames, before, during and after."""
        store = self.server.store
        if index >= len(store.order):
            self.send_error(404, "no such clip")
            return
        clip = store.clips[store.order[index]]
        try:
            times = [float(t) for t in parse_qs(query).get("t", [""])[0].split(",") if t][:6]
        except ValueError:
            self._json(400, {"error": "t: comma-separated seconds"})
            return
        size = (STILL_SIDE, STILL_SIDE)
        stills = grab_stills(clip.video, [(max(t, 0.0), size) for t in times], clip.fps or 30.0)
        found = [stills.get((max(t, 0.0), size)) for t in times]
        self._json(
            200,
            [None if s is None else {"t_s": s.t_s, "src": s.data_url} for s in found],
        )

    def do_POST(self) -> None:  # noqa: N802
        if urlsplit(self.path).path != "/api/decide":
            self.send_error(404, "not part of the review")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            self._json(413, {"error": "a decision is a small JSON object"})
            return
        try:
            body = json.loads(self.rfile.read(length))
            revision = self.server.store.decide(
                str(body["clip_id"]), str(body["action"]), dict(body.get("value") or {}),
                int(body["revision"]),
            )  # fmt: skip
        except RuntimeError as exc:  # another page decided since this one loaded
            self._json(409, {"error": str(exc)})
            return
        except (ValueError, KeyError, TypeError) as exc:
            self._json(400, {"error": str(exc)})
            return
        self._json(200, {"revision": revision})
