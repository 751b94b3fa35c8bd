"""Shared fixtures: forge clips made once per session, and the shared real clips when present."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from gaze.bench.forge import KINDS, forge_set
from gaze.bench.forge.forge import forge_clip
from gaze.schema.manifest import ManifestClip
from tests.devserver import dev_server  # noqa: F401  (a fixture: the LangGraph dev server)

REPO = Path(__file__).resolve().parents[1]
SHARED_CLIPS = Path(os.environ.get("GAZE_SHARED_CLIPS", REPO.parent / "shared" / "clips"))
FORGE_SEED = 3


@pytest.fixture(scope="session")
def forge_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One forge clip of every kind (clean + each injected failure), made once."""
    out = tmp_path_factory.mktemp("forge")
    forge_set(out, count=len(KINDS), seed=FORGE_SEED)
    return out


@pytest.fixture(scope="session")
def long_clip(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ManifestClip]:
    """A 24 s forge clip (6 windows): enough parallel observer and specialist calls for a
    burst of first attempts to meet a server's limits at the default concurrency."""
    path = tmp_path_factory.mktemp("long") / "long.mp4"
    return path, forge_clip(path, seed=11, failures=[], duration_s=24.0)


@pytest.fixture(scope="session")
def forge_rows(forge_dir: Path) -> dict[str, ManifestClip]:
    rows = [json.loads(line) for line in (forge_dir / "manifest.jsonl").read_text().splitlines()]
    return {
        r["metadata"]["injected"][0]
        if r["metadata"]["injected"]
        else "clean": ManifestClip.model_validate(r)
        for r in rows
    }


@pytest.fixture(scope="session")
def shared_manifest() -> list[dict]:
    manifest = SHARED_CLIPS / "manifest.jsonl"
    if not manifest.is_file():
        pytest.skip(
            f"shared real clips not found at {SHARED_CLIPS} (they are not part of the repo)"
        )
    return [json.loads(line) for line in manifest.read_text().splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch, tmp_path):
    """No test sees a user's model settings or writes to the user's cache."""
    for name in (
        "GAZE_MODEL",
        "GAZE_BASE_URL",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GAZE_CACHE_DIR", str(tmp_path / "gaze-cache"))


def _no_browser(reason: str) -> None:
    if os.environ.get("GAZE_REQUIRE_BROWSER"):  # set by .ci/run, where a skip would hide a gap
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium():
    """Debian's headless Chromium driven by Playwright (never Playwright's own download).

    Per module, not per session: Playwright's sync API keeps an event loop running in the main
    thread while it is open, and the code under test elsewhere calls ``asyncio.run``."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _no_browser("playwright is not installed (pip install -e '.[dev]')")
    executable = os.environ.get("GAZE_CHROMIUM") or shutil.which("chromium")
    if not executable:
        _no_browser("Chromium not found (apt-get install chromium; .ci/run installs it)")
    args = [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=args)
        yield browser
        browser.close()


class Watched:
    """A browser page and every console error or uncaught exception it produced."""

    def __init__(self, browser, width: int) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.requests: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))

    def screenshot(self, path: Path) -> int:
        """A full-page screenshot at ``path`` (also into $GAZE_SCREENSHOTS when set, to look
        at); returns how far the page scrolls sideways (0 when it fits its width)."""
        self.page.screenshot(path=str(path), full_page=True)
        keep = os.environ.get("GAZE_SCREENSHOTS")
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(keep) / path.name)
        return int(
            self.page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
        )


@pytest.fixture
def browser_page(chromium):
    opened: list[Watched] = []

    def open_page(width: int = 1280) -> Watched:
        opened.append(Watched(chromium, width))
        return opened[-1]

    yield open_page
    for watched in opened:
        watched.page.close()
