"""Before clip work, the start-up check finds out what a vLLM-like endpoint accepts: images per
prompt and context length, each limit one line saying which flag to change (exit 2)."""

from __future__ import annotations

from gaze.cli.main import run
from tests.cli.test_cli import one_line_error
from tests.cli.test_real_paths import on_server
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
    assert "refuses 64 images" in line and "--limit-mm-per-prompt '{\"image\": 64}'" in line
    assert "--max-segment-windows 2 --max-frames-per-call 32" in line  # or send fewer


def test_a_context_too_small_for_the_largest_request_is_one_line(forge_dir, forge_rows, capsys):
    with StandIn(responder=vllm_like(max_model_len=4096)) as server:
        code = run(on_server(forge_rows["clean"], forge_dir, server))
    assert code == 2
    line = one_line_error(capsys.readouterr().err)
    assert "context is 4,096 tokens" in line and "--max-model-len" in line
    assert "--max-segment-windows 2 --max-frames-per-call 32" in line  # or send less


def test_an_endpoint_that_fits_runs_and_a_smaller_budget_fits_a_smaller_server(
    forge_dir, forge_rows, capsys
):
    with StandIn(responder=vllm_like(max_images=16, max_model_len=16384)) as server:
        assert run(on_server(forge_rows["clean"], forge_dir, server)) == 2  # 64 images > 16
        capsys.readouterr()
        smaller = ["--max-frames-per-call", "16", "--max-side", "384"]
        code = run(on_server(forge_rows["clean"], forge_dir, server, *smaller))
    assert code == 0, capsys.readouterr().err
