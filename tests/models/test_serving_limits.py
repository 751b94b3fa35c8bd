"""Before clip work, the start-up check finds out what a vLLM-like endpoint accepts: images per
prompt and context length, each limit one line saying which flag to change (exit 2)."""

from __future__ import annotations

import asyncio

from gaze.cli.main import run
from gaze.schema.report import Report
from gaze.settings.context import GazeContext
from gaze.settings.served_layout import fit_layout
from tests.cli.test_cli import one_line_error
from tests.cli.test_real_paths import diagnose, on_server
from tests.standin import Reply, StandIn, clip_work, error_reply, minimal_chat


def images_in(body) -> int:
    return sum(
        1
        for message in body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    )


def vllm_like(max_images: int = 64, max_model_len: int | None = 32768):
    def respond(body):
        if body is None:  # GET /v1/models
            model = {"id": "m", "object": "model", "owned_by": "vllm"}
            if max_model_len is not None:
                model["max_model_len"] = max_model_len
            return Reply(200, {"object": "list", "data": [model]})
        if images_in(body) > max_images:
            return error_reply(
                400, f"At most {max_images} image(s) may be provided in one request."
            )
        return minimal_chat(body)

    return respond


def test_too_few_images_per_prompt_is_one_line_naming_the_vllm_flag(forge_dir, forge_rows, capsys):
    with StandIn(responder=vllm_like(max_images=8)) as server:
        code = run(on_server(forge_rows["clean"], forge_dir, server))
        clip_requests = clip_work(server.seen)
    # found out by the start-up check; only the two one-image grounding calls went out with it
    assert code == 2 and len(clip_requests) <= 2
    assert all(images_in(s.body) == 1 for s in clip_requests)
    line = one_line_error(capsys.readouterr().err)
    # the most a run sends: a long clip's twelve-window segments (four windows up to 64 s)
    assert "refuses 192 images" in line and "--limit-mm-per-prompt '{\"image\": 192}'" in line
    assert "--max-segment-windows 2 --max-frames-per-call 32" in line  # or send fewer


def test_a_context_too_small_for_the_largest_request_is_one_line(forge_dir, forge_rows, capsys):
    with StandIn(responder=vllm_like(max_model_len=4096)) as server:
        code = run(on_server(forge_rows["clean"], forge_dir, server))
    assert code == 2
    line = one_line_error(capsys.readouterr().err)
    assert "context is 4,096 tokens" in line and "--max-model-len" in line
    assert "--max-segment-windows 2 --max-frames-per-call 32" in line  # or send less


def sent_images(seen) -> list[int]:
    return [images_in(s.body) for s in clip_work(seen)]


def frames_seen(seen) -> set[str]:
    return {
        part["image_url"]["url"]
        for s in clip_work(seen)
        for message in s.body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    }


def test_a_server_started_per_the_old_readme_gets_shorter_segments(long_clip, capsys):
    """vLLM with --limit-mm-per-prompt '{"image": 33}' (the README before four-window segments):
    the run fits two-window segments to it instead of failing, sees every frame, records the
    layout it used, and a rerun answered from the cache needs no server."""
    path, row = long_clip  # 24 s: six windows of 16 frames
    with StandIn(responder=vllm_like(max_images=33, max_model_len=None)) as server:
        args = diagnose(path, row.instruction, "--model", "openai:m", "--base-url",
                        server.url + "/v1")  # fmt: skip
        code = run(args)
        captured = capsys.readouterr()
        seen = list(server.seen)
    assert code == 0, captured.err
    report = Report.model_validate_json(captured.out)
    manifest = report.manifest
    assert manifest.served_images == 33
    assert (manifest.settings["max_segment_windows"], manifest.settings["max_frames_per_call"]) == (
        2,
        32,
    )
    assert max(sent_images(seen)) <= 33  # nothing was refused
    assert len(frames_seen(seen)) == 24 * 4  # every sampled frame, as with four windows
    assert manifest.calls["observer"] == 3  # one call per two windows
    assert not report.flags and not report.assessment.incomplete

    args_shown = [a for a in args if a != "--json"]  # the terminal report says why
    assert run(args_shown) == 0  # the server is gone: answered from the cache
    out = " ".join(capsys.readouterr().out.split())
    assert "the server takes at most 33 images per request" in out
    assert "segments were 2 windows (32 frames)" in out


def test_a_context_too_short_for_four_windows_gets_shorter_segments(long_clip, capsys):
    path, row = long_clip
    with StandIn(responder=vllm_like(max_images=64, max_model_len=32768)) as server:
        code = run(on_server(row, path.parent, server))
        captured = capsys.readouterr()
        seen = list(server.seen)
    assert code == 0, captured.err
    manifest = Report.model_validate_json(captured.out).manifest
    assert manifest.served_images is not None and 33 <= manifest.served_images < 48
    assert manifest.settings["max_segment_windows"] == 2
    assert max(sent_images(seen)) <= 32 and len(frames_seen(seen)) == 24 * 4


def test_a_server_that_takes_one_window_gets_one_window_segments(forge_dir, forge_rows, capsys):
    with StandIn(responder=vllm_like(max_images=16, max_model_len=16384)) as server:
        code = run(on_server(forge_rows["clean"], forge_dir, server))
        seen = list(server.seen)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    manifest = Report.model_validate_json(captured.out).manifest
    assert manifest.served_images == 16 and manifest.settings["max_segment_windows"] == 1
    assert max(sent_images(seen)) <= 16
    smaller = ["--max-frames-per-call", "16", "--max-side", "384"]
    with StandIn(responder=vllm_like(max_images=16, max_model_len=16384)) as server:
        code = run(on_server(forge_rows["clean"], forge_dir, server, *smaller))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert Report.model_validate_json(captured.out).manifest.served_images is None  # it fit


def test_no_layout_fits_a_server_that_takes_fewer_than_the_judges_frames(
    forge_dir, forge_rows, capsys
):
    with StandIn(responder=vllm_like(max_images=32, max_model_len=None)) as server:
        code = run(
            on_server(forge_rows["clean"], forge_dir, server, "--sections", "diagnosis,pa_ia")
        )
    assert code == 2  # the judges send 33 images: one line, as before
    line = one_line_error(capsys.readouterr().err)
    assert "refuses 192 images" in line


def test_fit_layout_keeps_every_frame_in_fewer_windows_per_call():
    ctx = GazeContext()
    assert fit_layout(ctx, 192) is ctx
    four = fit_layout(ctx, 64)  # a server built for 64: four-window segments, grown no further
    assert four is not None and (four.max_segment_windows, four.max_frames_per_call) == (4, 64)
    nine = fit_layout(ctx, 159)  # gpt-4o's 128k context at 768 px: whole windows of 159
    assert nine is not None and (nine.max_segment_windows, nine.max_frames_per_call) == (4, 144)
    two = fit_layout(ctx, 33)
    assert two is not None and (two.max_segment_windows, two.max_frames_per_call) == (2, 32)
    one = fit_layout(ctx, 20)
    assert one is not None and (one.max_segment_windows, one.max_frames_per_call) == (1, 16)
    assert fit_layout(ctx, 15) is None  # one window's 16 frames do not fit
    judged = GazeContext(sections=["diagnosis", "pa_ia"])
    assert fit_layout(judged, 32) is None  # the judges' 32 frames and the initial scene
    grid = GazeContext(grid=True)
    fitted = fit_layout(grid, 40)  # a grid sends one image per window: forty windows fit
    assert fitted is not None
    assert (fitted.max_segment_windows, fitted.max_frames_per_call) == (4, 40)


def test_bench_run_fits_every_clip_to_a_server_per_the_old_readme(long_clip, tmp_path):
    """Many clips share one caller: the check runs once, every clip's segments fit, and each
    report records the layout it used."""
    path, row = long_clip
    rows = [row.model_copy(update={"clip_id": f"long-{n}", "video": str(path)}) for n in range(3)]
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    with StandIn(responder=vllm_like(max_images=33, max_model_len=None)) as server:
        code = run(
            ["bench", "run", str(manifest), "--out", str(tmp_path / "run"), "--model", "openai:m",
             "--base-url", server.url + "/v1", "--no-cache"]
        )  # fmt: skip
        seen = list(server.seen)
    assert code == 0
    reports = [
        Report.model_validate_json(p.read_text())
        for p in sorted((tmp_path / "run" / "reports").glob("*.json"))
    ]
    assert len(reports) == 3
    for report in reports:
        assert report.manifest.served_images == 33 and not report.flags
        assert report.manifest.settings["max_segment_windows"] == 2
        assert report.manifest.calls["observer"] == 3
    assert max(sent_images(seen)) <= 33
    probes = [s for s in seen if s.method == "POST" and s not in clip_work(seen)]
    assert len(probes) == 2  # one start-up check (one image, then 64) for the whole run


def test_a_graph_run_nobody_prepared_fits_its_segments_too(long_clip, tmp_path, monkeypatch):
    """LangGraph Studio's way: the graph itself opens the run's services and its observe node
    fits the segments, so the align, specialist, critic and report nodes use that layout."""
    from gaze.graph import build_graph

    monkeypatch.setenv("GAZE_CACHE_DIR", str(tmp_path / "cache"))
    path, row = long_clip
    with StandIn(responder=vllm_like(max_images=33, max_model_len=None)) as server:
        context = GazeContext(model="openai:m", base_url=server.url + "/v1")
        inputs = {"video": str(path), "instruction": row.instruction}
        final = asyncio.run(build_graph().ainvoke(inputs, context=context))
        seen = list(server.seen)
    report = Report.model_validate(final["report"])
    assert report.manifest.served_images == 33 and not report.flags
    assert report.manifest.settings["max_segment_windows"] == 2
    assert report.manifest.calls["observer"] == 3
    assert max(sent_images(seen)) <= 33 and len(frames_seen(seen)) == 24 * 4


def test_openai_itself_is_not_sent_the_many_image_probe_but_is_fitted_to_its_context(
    monkeypatch,
):
    """OpenAI's API documents 500 images per request: its start-up check sends only the
    one-image call (192 probe images would bill about 49k tokens a run) and still fits the
    layout to gpt-4o's listed 128,000-token context."""
    import openai

    from gaze.models.caller import RetryPolicy
    from gaze.models.protocol import FewerImagesServed
    from gaze.models.providers.openai_chat import OpenAIChat
    from gaze.models.serving_limits import startup_check

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-sent")
    hosted = OpenAIChat("gpt-4o")  # no base URL: OpenAI's own API, as its rules see it
    with StandIn(responder=vllm_like(max_images=1)) as server:
        hosted._client = openai.AsyncOpenAI(
            api_key="sk-test-not-sent", base_url=server.url + "/v1", max_retries=0
        )
        check = startup_check(
            hosted, "openai:gpt-4o", images=192, max_side=768, attempts=1,
            retry=RetryPolicy(), timeout_s=10,
        )  # fmt: skip
        try:
            asyncio.run(check)
            raise AssertionError("192 frames at 768 px do not fit 128,000 tokens")
        except FewerImagesServed as fitted:
            assert fitted.images == 159
        seen = [s for s in server.seen if s.body is not None]
    assert [images_in(s.body) for s in seen] == [1]
