"""Serving a viewer site on 127.0.0.1 with HTTP Range requests, so a browser can seek in the
videos. Only the site's own files and the videos it links are served, nothing else under the
shared folder."""

from __future__ import annotations

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


class SiteServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, allowed: Iterable[Path], port: int = 0) -> None:
        self.root = root.resolve()
        self.allowed = {p.resolve() for p in allowed}
        super().__init__(("127.0.0.1", port), _Handler)

    def url(self, path: Path) -> str:
        relative = path.resolve().relative_to(self.root).as_posix()
        return f"http://127.0.0.1:{self.server_address[1]}/{relative}"

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, daemon=True)
        thread.start()
        return thread


class _Handler(BaseHTTPRequestHandler):
    server: SiteServer

    def log_message(self, format: str, *args: object) -> None:  # quiet: the CLI prints the URL
        return

    def _target(self) -> Path | None:
        relative = unquote(urlsplit(self.path).path).lstrip("/")
        target = (self.server.root / relative).resolve()
        return target if target in self.server.allowed and target.is_file() else None

    def do_HEAD(self) -> None:  # noqa: N802 (the http.server naming)
        self._reply(send_body=False)

    def do_GET(self) -> None:  # noqa: N802
        self._reply(send_body=True)

    def _reply(self, send_body: bool) -> None:
        target = self._target()
        if target is None:
            self.send_error(404, "not part of this site")
            return
        size = target.stat().st_size
        wanted = byte_range(self.headers.get("Range"), size)
        if wanted == "unsatisfiable":
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        first, last = wanted if isinstance(wanted, tuple) else (0, size - 1)
        self.send_response(206 if isinstance(wanted, tuple) else 200)
        kind = TYPES.get(target.suffix.lower()) or mimetypes.guess_type(target.name)[0]
        self.send_header("Content-Type", kind or "application/octet-stream")
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(max(last - first + 1, 0)))
        if isinstance(wanted, tuple):
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.end_headers()
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
                    self.wfile.write(block)
                    left -= len(block)
            except (BrokenPipeError, ConnectionResetError):
                return  # the browser cancelled (it does when it seeks)


def site_server(pages: Iterable[Path], videos: Iterable[Path], port: int = 0) -> SiteServer:
    """A server for a written site: rooted at the deepest folder holding both the pages and the
    videos they link (so relative links resolve), serving those files only."""
    files = [p.resolve() for p in [*pages, *videos]]
    root = Path(os.path.commonpath([str(p.parent) for p in files]))
    return SiteServer(root, files, port)
