"""README "Frames as video": with ``--frames-as video`` every frame still goes to the model, in
the same order, each window's frames as one ``data:video/jpeg`` part (as vLLM takes a sequence
of frames); a server whose model merges two frames in time (Qwen-VL) computes half the image
tokens that the same clip costs as images, and the diagnosis on the scripted backbone is the
same."""

from __future__ import annotations

import pytest

from gaze import diagnose
from gaze.bench.forge import forge_clip
from gaze.errors import GazeInputError
from gaze.schema.report import Report
from gaze.settings.context import GazeContext
from tests.prefix_cache import BLOCK, PrefixCache, media_url, url_frames
from tests.promises.conftest import gaze_cli
from tests.standin import StandIn, clip_work, error_reply, minimal_chat


def _run(path, row, *options):
    cache = PrefixCache()
    with StandIn(responder=cache.responder(minimal_chat)) as server:
        proc = gaze_cli(
            "diagnose", str(path), "-i", row.instruction, "--model", "openai:m",
            "--base-url", server.url + "/v1", "--json", "--no-cache", *options,
        )  # fmt: skip
        work = clip_work(server.seen)
    assert proc.returncode == 0, proc.stderr
    served = [s for s in cache.served if s.schema != "Probe"]
    return Report.model_validate_json(proc.stdout), work, served


def _count(body, kind):
    """How many parts of ``kind`` (image_url or video_url) a request carries."""
    return sum(
        part["type"] == kind
        for message in body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
    )


def refusing(kind, most, noun):
    """A stand-in's answers: vLLM's refusal past ``most`` parts of ``kind``."""

    def respond(body):
        if isinstance(body, dict) and _count(body, kind) > most:
            return error_reply(400, f"At most {most} {noun}(s) may be provided in one prompt.")
        return minimal_chat(body)

    return respond


def _media(work, kind):
    """Each request's media parts of ``kind`` (image_url or video_url), as URLs in order."""
    return [
        [
            url
            for message in seen.body["messages"]
            if isinstance(message["content"], list)
            for part in message["content"]
            if part["type"] == kind and (url := media_url(part))
        ]
        for seen in work
    ]


def test_video_parts_carry_every_frame_and_cost_half_the_image_tokens(long_clip):
    path, row = long_clip
    as_images, image_work, image_served = _run(path, row)
    as_video, video_work, video_served = _run(path, row, "--frames-as", "video")

    # The same calls, and each call shows the same frames in the same order (the calls come
    # in whatever order they finish, so they are compared as sorted frame sequences).
    assert sorted(s.path for s in video_work) == sorted(s.path for s in image_work)
    assert len(video_served) == len(image_served)
    videos = [urls for urls in _media(video_work, "video_url") if urls]
    assert all(len(url_frames(url)) == 16 for urls in videos for url in urls)  # a window each
    shown_as_video = sorted(tuple(f for url in urls for f in url_frames(url)) for urls in videos)
    shown_as_images = sorted(
        tuple(url_frames(url)[0] for url in urls)
        for urls in _media(image_work, "image_url")
        if len(urls) > 1
    )
    assert shown_as_video == shown_as_images
    distinct = {f for urls in _media(video_work, "video_url") for u in urls for f in url_frames(u)}
    assert len(distinct) == 24 * 4  # every frame of the 24 s clip at 4 per second
    # Each request with videos asks vLLM to keep every frame and read them at 4 per second.
    for seen in video_work:
        expected = (
            {"video": {"num_frames": -1, "fps": 4.0}} if _count(seen.body, "video_url") else None
        )
        assert seen.body.get("media_io_kwargs") == expected
    # Grounding's lone initial frame stays an image.
    assert sum(map(len, _media(video_work, "image_url"))) == 1

    computed_images = sum(s.uncached_image_tokens for s in image_served)
    computed_video = sum(s.uncached_image_tokens for s in video_served)
    # Half the tokens, but for grounding's initial frame: an image apart from the first video
    # (as images it is the prefix of the first observer call's frames).
    (grounding,) = [s.image_tokens for s in video_served if s.schema == "Grounding"]
    slack = BLOCK * len(video_served)
    assert abs(computed_video - grounding - computed_images / 2) <= slack
    assert computed_video < 0.52 * computed_images
    assert as_video.manifest.images == as_images.manifest.images  # frames shown, both ways
    # The bill follows: the server's count of every input token, text included.
    assert as_video.manifest.input_tokens == sum(s.tokens for s in video_served)
    assert as_video.manifest.input_tokens < 0.65 * as_images.manifest.input_tokens
    # gaze's own estimate (Qwen-VL's rule: a video's frames two by two) sees the same saving.
    saved = as_images.manifest.estimated_input_tokens - as_video.manifest.estimated_input_tokens
    server_saved = as_images.manifest.input_tokens - as_video.manifest.input_tokens
    assert abs(saved - server_saved) <= 0.05 * server_saved
    assert as_video.manifest.settings["frames_as"] == "video"


def test_the_scripted_diagnosis_is_the_same_with_frames_as_video(tmp_path):
    path = tmp_path / "clip.mp4"
    forge_clip(path, seed=3, failures=["object_teleportation", "frame_corruption"], duration_s=20.0)
    reports = [
        diagnose(
            path,
            "put the block on the plate",
            context=GazeContext(model="scripted:auto", use_cache=False, frames_as=frames_as),
        )
        for frames_as in ("images", "video")
    ]
    events = [[(e.type, e.start_s, e.end_s) for e in r.events] for r in reports]
    assert events[0] and events[0] == events[1]
    assert reports[0].manifest.images == reports[1].manifest.images > 0


def test_frames_as_video_is_refused_where_no_video_part_can_go(tmp_path):
    with pytest.raises(GazeInputError, match="choose one"):
        diagnose(
            tmp_path / "none.mp4",
            "x",
            context=GazeContext(model="scripted:auto", frames_as="video", grid=True),
        )
    proc = gaze_cli(
        "diagnose", "--demo", "--model", "openai:gpt-4o", "--frames-as", "video", "--no-cache",
        env={"OPENAI_API_KEY": "sk-test-not-real"},
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "takes no video parts" in proc.stderr
    assert "sk-test" not in proc.stderr


def test_a_server_that_refuses_videos_is_named_in_one_line(long_clip):
    path, row = long_clip

    with StandIn(responder=refusing("video_url", 2, "video")) as server:
        proc = gaze_cli(
            "diagnose", str(path), "-i", row.instruction, "--model", "openai:m",
            "--base-url", server.url + "/v1", "--json", "--no-cache", "--frames-as", "video",
        )  # fmt: skip
        work = clip_work(server.seen)
    # Two videos a request: two-window segments, every frame still sent.
    assert proc.returncode == 0, proc.stderr
    report = Report.model_validate_json(proc.stdout)
    assert report.manifest.served_images == 32
    assert max(len(urls) for urls in _media(work, "video_url")) == 2
    shown = {f for urls in _media(work, "video_url") for u in urls for f in url_frames(u)}
    assert len(shown) == 24 * 4


def test_a_server_that_takes_no_video_fails_at_start_in_one_line(long_clip):
    path, row = long_clip

    def no_video(body):
        if isinstance(body, dict) and _count(body, "video_url"):
            return error_reply(400, "video input is not supported for this model")
        return minimal_chat(body)

    with StandIn(responder=no_video) as server:
        proc = gaze_cli(
            "diagnose", str(path), "-i", row.instruction, "--model", "openai:m",
            "--base-url", server.url + "/v1", "--no-cache", "--frames-as", "video",
        )  # fmt: skip
        work = clip_work(server.seen)
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert "refused a request with 12 videos" in line and "--frames-as images" in line
    assert "--limit-mm-per-prompt '{\"video\": 12}'" in line
    assert "not supported" in line  # the server's own reason
    assert all(
        _count(s.body, "video_url") == 0 for s in work
    )  # only grounding went out with the check


def test_with_videos_the_judges_images_are_still_checked_at_start(long_clip):
    """The judges (``--sections pa_ia``) send 33 images even with ``--frames-as video``: a
    server that takes the videos but fewer images fails at start in one line, not mid-run."""
    path, row = long_clip

    with StandIn(responder=refusing("image_url", 16, "image")) as server:
        proc = gaze_cli(
            "diagnose", str(path), "-i", row.instruction, "--model", "openai:m",
            "--base-url", server.url + "/v1", "--no-cache", "--frames-as", "video",
            "--sections", "diagnosis,pa_ia",
        )  # fmt: skip
    assert proc.returncode == 2
    line = proc.stderr.strip()
    assert "\n" not in line and "refuses 33 images" in line and "judges" in line
    assert '--limit-mm-per-prompt \'{"image": 33, "video": 12}\'' in line
