"""The LangGraph dev server (``langgraph dev``, the in-memory server behind Studio) started as the
README starts it, on a free port of 127.0.0.1, for the tests that drive it over its local API."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(url: str, body: object | None = None, timeout: float = 120) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url,
        data=data,
        method="POST" if data else "GET",
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


@pytest.fixture
def dev_server(tmp_path):
    port = free_port()
    env = {
        **os.environ,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "GAZE_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("GAZE_MODEL", None)
    log = (tmp_path / "server.log").open("w")
    cli = Path(sys.executable).with_name("langgraph")
    proc = subprocess.Popen(
        [
            str(cli),
            "dev",
            "--config",
            str(REPO / "langgraph.json"),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-browser",
            "--no-reload",
        ],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # paths in the config are cwd-relative
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                call(base + "/ok", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.close()
                    pytest.fail(
                        "langgraph dev did not start:\n"
                        + (tmp_path / "server.log").read_text()[-3000:]
                    )
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
