"""Serving a viewer site on 127.0.0.1 with HTTP Range requests, so a browser can seek in the
videos. What is served is a rule, not a list made at start: any file inside the site's folder
(pages written after the server started too: a site rebuilt beside a running server is served
as it now is), and the videos the site's pages link, as its ``media.json`` lists them (read
again when a request names a file not yet known). Nothing else under the shared folder."""

from __future__ import annotations

import json
import mimetypes
import os
import re
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

CHUNK = 256 * 1024
_RANGE = re.compile(r"bytes=(\d*)-(\d*)$")
TYPES = {".webm": "video/webm", ".mp4": "video/mp4", ".mkv": "video/x-matroska"}


def byte_range(header: str | None, size: int) -> tuple[int, int] | None | str:
    """``(first, last)`` of a single-range ``Range`` header, None for no (or an unusable)
    header, ``"unsatisfiable"`` for a range outside the file (RFC 9110 section 14)."""
    if not header:
        return None
    match = _RANGE.match(header.strip())
    if not match or match.groups() == ("", ""):
        return None
    first, last = match.groups()
    if first == "":  # the last N bytes
        length = int(last)
        return (max(size - length, 0), size - 1) if length and size else "unsatisfiable"
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or (last and int(last) < start):
        return "unsatisfiable"
    return start, end


MEDIA_LIST = "media.json"
"""The site's list of the videos its pages link (absolute paths), written by ``build_site``."""


class SiteServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, site: Path, videos: Iterable[Path], port: int = 0) -> None:
        self.root = root.resolve()
        self.site = site.resolve()
        self.videos = {p.resolve() for p in videos}
        super().__init__(("127.0.0.1", port), _Handler)

    def url(self, path: Path) -> str:
        relative = path.resolve().relative_to(self.root).as_posix()
        return f"http://127.0.0.1:{self.server_address[1]}/{relative}"

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread

    def serves(self, target: Path) -> bool:
        """Whether ``target`` (resolved) is part of the site as it is now."""
        if not target.is_file():
            return False
        if target.is_relative_to(self.site) or target in self.videos:
            return True
        self.videos |= linked_videos(self.site)  # a site rebuilt since the start
        return target in self.videos


def linked_videos(site: Path) -> set[Path]:
    """The videos a written site's pages link (none when its list is missing or damaged)."""
    try:
        listed = json.loads((site / MEDIA_LIST).read_text(encoding="utf-8"))
        return {Path(p).resolve() for p in listed if isinstance(p, str)}
    except (OSError, ValueError, TypeError):
        return set()


class _Handler(BaseHTTPRequestHandler):
    server: SiteServer

    def log_message(self, format: str, *args: object) -> None:  # quiet: the CLI prints the URL
        return

    def _target(self) -> Path | None:
        relative = unquote(urlsplit(self.path).path).lstrip("/")
        target = (self.server.root / relative).resolve()
        return target if self.server.serves(target) else None

    def do_HEAD(self) -> None:  # noqa: N802 (the http.server naming)
        self._reply(send_body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._reply(send_body=True)

    def _reply(self, send_body: bool) -> None:
        target = self._target()
        if target is None:
            self.send_error(404, "not part of this site")
            return
        send_file(self, target, send_body)


def send_file(handler: BaseHTTPRequestHandler, target: Path, send_body: bool = True) -> None:
    """Answer with a file, honouring a single-range ``Range`` header (RFC 9110)."""
    size = target.stat().st_size
    wanted = byte_range(handler.headers.get("Range"), size)
    if wanted == "unsatisfiable":
        handler.send_response(416)
        handler.send_header("Content-Range", f"bytes */{size}")
        handler.send_header("Content-Length", "0")
        handler.end_headers()
        return
    first, last = wanted if isinstance(wanted, tuple) else (0, size - 1)
    handler.send_response(206 if isinstance(wanted, tuple) else 200)
    kind = TYPES.get(target.suffix.lower()) or mimetypes.guess_type(target.name)[0]
    handler.send_header("Content-Type", kind or "application/octet-stream")
    handler.send_header("Accept-Ranges", "bytes")
    handler.send_header("Content-Length", str(max(last - first + 1, 0)))
    if isinstance(wanted, tuple):
        handler.send_header("Content-Range", f"bytes {first}-{last}/{size}")
    handler.end_headers()
    if not send_body:
        return
    with target.open("rb") as handle:
        handle.seek(first)
        left = last - first + 1
        try:
            while left > 0:
                block = handle.read(min(CHUNK, left))
                if not block:
                    break
                handler.wfile.write(block)
                left -= len(block)
        except (BrokenPipeError, ConnectionResetError):
            return  # the browser cancelled (it does when it seeks)


def site_server(
    site: Path, pages: Iterable[Path], videos: Iterable[Path], port: int = 0
) -> SiteServer:
    """A server for the site written in folder ``site``: rooted at the deepest folder holding
    both its pages and the videos they link (so relative links resolve)."""
    files = [p.resolve() for p in [*pages, *videos]]
    root = Path(os.path.commonpath([str(p.parent) for p in files] + [str(site.resolve())]))
    return SiteServer(root, site, videos, port)
