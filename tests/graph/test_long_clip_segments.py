"""A clip longer than four four-window segments gets longer segments, so its calls stay near a
60 s clip's, every sampled frame still seen -- as far as the served model takes them: a server
built for 64 images keeps four-window segments and the report says why."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from gaze.bench.forge import forge_clip
from gaze.cli.main import run
from gaze.models.providers.openai_chat import OpenAIChat
from gaze.models.serving_limits import images_within
from gaze.schema.report import Report
from gaze.settings.caller import build_caller
from gaze.settings.context import GazeContext
from gaze.settings.segment_length import segment_windows
from gaze.settings.served_layout import fit_layout
from tests.cli.test_real_paths import diagnose
from tests.models.test_serving_limits import frames_seen, sent_images, vllm_like
from tests.standin import StandIn

SECONDS = 100.0
WINDOWS = 25  # 4 s windows


@pytest.fixture(scope="module")
def clip_100s(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("long100") / "long100.mp4"
    return path, forge_clip(path, seed=5, failures=[], duration_s=SECONDS)


def test_segment_length_grows_with_the_clip_within_what_a_call_takes():
    ctx = GazeContext()
    assert [segment_windows(ctx, n) for n in (0, 2, 8, 15, 16)] == [4] * 5  # up to 64 s
    assert segment_windows(ctx, 17) == 5 and segment_windows(ctx, WINDOWS) == 7
    assert segment_windows(ctx, 45) == 12  # 180 s: four segments of 192 frames
    assert segment_windows(ctx, 150) == 12  # 10 min: no more than a call's 192 frames
    assert segment_windows(GazeContext(segments_per_clip=0), 45) == 4  # growth off
    assert segment_windows(GazeContext(max_segment_windows=2), 45) == 12
    assert segment_windows(GazeContext(max_frames_per_call=64), 45) == 4  # as before
    assert segment_windows(GazeContext(grid=True), 150) == 38  # one grid image per window
    # a server taking 64 images keeps four-window segments; gpt-4o's context, nine
    assert segment_windows(fit_layout(ctx, 64), 45) == 4  # type: ignore[arg-type]
    assert segment_windows(fit_layout(ctx, 159), 45) == 9  # type: ignore[arg-type]


def _report(args: list[str], capsys: pytest.CaptureFixture[str]) -> Report:
    code = run(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return Report.model_validate_json(captured.out)


def _on(server: StandIn, path, row, *extra: str) -> list[str]:
    return diagnose(path, row.instruction, "--model", "openai:m", "--no-cache",
                    "--base-url", server.url + "/v1", *extra)  # fmt: skip


def test_a_long_clip_needs_the_calls_of_a_shorter_one_and_every_frame_is_seen(clip_100s, capsys):
    path, row = clip_100s
    with StandIn(responder=vllm_like(max_images=192, max_model_len=None)) as server:
        grown = _report(_on(server, path, row), capsys)
        seen_grown = list(server.seen)
    with StandIn(responder=vllm_like(max_images=192, max_model_len=None)) as server:
        fixed = _report(_on(server, path, row, "--segments-per-clip", "0"), capsys)
        seen_fixed = list(server.seen)
    frames = int(SECONDS * 4)
    assert len(frames_seen(seen_grown)) == len(frames_seen(seen_fixed)) == frames
    assert grown.manifest.calls["observer"] == 4 and fixed.manifest.calls["observer"] == 7
    assert grown.manifest.calls["specialist"] == 4 and fixed.manifest.calls["specialist"] == 7
    assert sum(grown.manifest.calls.values()) == sum(fixed.manifest.calls.values()) - 6
    assert max(sent_images(seen_grown)) == 7 * 16 and max(sent_images(seen_fixed)) == 64
    assert grown.manifest.served_images is None and not grown.flags
    assert grown.manifest.settings["segments_per_clip"] == 4


def test_a_server_built_for_64_images_keeps_four_window_segments_and_says_so(clip_100s, capsys):
    path, row = clip_100s
    with StandIn(responder=vllm_like(max_images=64, max_model_len=None)) as server:
        report = _report(_on(server, path, row), capsys)
        seen = list(server.seen)
    assert max(sent_images(seen)) <= 64 and len(frames_seen(seen)) == int(SECONDS * 4)
    assert report.manifest.calls["observer"] == 7  # 25 windows in fours: as before the growth
    assert report.manifest.served_images == 64
    assert report.manifest.settings["max_frames_per_call"] == 64


def test_a_hosted_model_is_fitted_to_its_listed_context(monkeypatch):
    """OpenAI's API does not report a context length; genai-prices lists it (gpt-4o: 128,000
    tokens), and a 180 s clip's segments grow only as far as 768 px frames fit in it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")
    hosted = OpenAIChat("gpt-4o")
    assert asyncio.run(hosted.context_length()) == 128_000
    most = images_within(hosted, 128_000, GazeContext().max_side)
    fitted = fit_layout(GazeContext(), most)
    assert fitted is not None and segment_windows(fitted, 45) == most // 16 == 9
    assert asyncio.run(OpenAIChat("not-a-listed-model").context_length()) is None


def test_a_check_remembered_for_one_layout_does_not_answer_another():
    """The cache remembers what a server took for the images a run asked; a run that asks for
    more (longer segments, larger frames) checks again."""
    keys = set()
    for ctx in (GazeContext(), GazeContext(max_frames_per_call=64), GazeContext(max_side=384)):
        served = dataclasses.replace(ctx, model="openai:m", base_url="http://127.0.0.1:9/v1")
        caller = build_caller(served)
        keys.add(caller._images_key("grounding"))
    assert len(keys) == 3
