"""Frames as video parts (``--frames-as video``): how a window's frames are cut, sent, counted,
keyed and recorded, without a model."""

from __future__ import annotations

import base64
import functools
import math

import cv2
import numpy as np

from gaze.agents.common import VideoCut, frames_then_task
from gaze.models.cache import cache_key
from gaze.models.protocol import ImagePart, Message, ModelRequest, TextPart, VideoPart
from gaze.models.providers.openai_chat import request_body
from gaze.models.tokens import estimate_input_tokens, image_tokens, video_tokens
from gaze.models.transcript import _parts
from gaze.report.transcript import transcript_section
from gaze.video.windows import window_at


def jpeg(level: int, width: int = 320, height: int = 240) -> bytes:
    ok, raw = cv2.imencode(".jpg", np.full((height, width, 3), level, np.uint8))
    assert ok
    return raw.tobytes()


WINDOW_OF = VideoCut(functools.partial(window_at, window_s=4.0), 4.0)

FRAMES = [(round(i * 0.25, 6), jpeg(i)) for i in range(16, 48)]
"""Two windows of 4 s at 4 fps, 4.00-11.75 s (windows 1 and 2 of a clip)."""


def test_each_window_of_the_clip_grid_becomes_one_video_of_its_frames_in_order():
    system, user = frames_then_task(FRAMES, "the task", video_windows=WINDOW_OF)
    videos = [p for p in user.parts if isinstance(p, VideoPart)]
    labels = [p.text for p in user.parts if isinstance(p, TextPart)]
    assert [len(v.frames) for v in videos] == [16, 16]
    assert [f.jpeg for v in videos for f in v.frames] == [j for _, j in FRAMES]
    assert labels[1:3] == [
        "t=4.00-7.75s, 16 frames every 0.25s",
        "t=8.00-11.75s, 16 frames every 0.25s",
    ]
    assert labels[-1] == "the task" and user.frames == 32 and user.images == 0
    # Cut on the clip's grid, not from the list's start: a list starting mid-window sends that
    # window's tail, then the next window whole, the same video any other call sends.
    _, tail = frames_then_task(FRAMES[8:], "t", video_windows=WINDOW_OF)
    assert [len(p.frames) for p in tail.parts if isinstance(p, VideoPart)] == [8, 16]
    assert [p for p in tail.parts if isinstance(p, VideoPart)][1] == videos[1]
    # A lone frame (grounding) stays an image; without a window length, frames are images.
    assert frames_then_task(FRAMES[:1], "t", video_windows=WINDOW_OF)[1].images == 1
    assert frames_then_task(FRAMES, "t")[1].images == 32


def test_a_video_goes_out_as_vllm_reads_a_sequence_of_jpegs():
    _, user = frames_then_task(FRAMES[:16], "t", video_windows=WINDOW_OF)
    request = ModelRequest("observer", (user,), "X")
    content = request_body("m", request)["messages"][0]["content"]
    (video,) = [p for p in content if p["type"] == "video_url"]
    url = video["video_url"]["url"]
    assert url.startswith("data:video/jpeg;base64,")
    sent = [base64.b64decode(f) for f in url.removeprefix("data:video/jpeg;base64,").split(",")]
    assert sent == [j for _, j in FRAMES[:16]]
    # vLLM keeps 32 frames of a video and assumes 1 per second unless asked otherwise.
    body = request_body("m", request)
    assert body["media_io_kwargs"] == {"video": {"num_frames": -1, "fps": 4.0}}
    images = ModelRequest("observer", (frames_then_task(FRAMES[:16], "t")[1],), "X")
    assert "media_io_kwargs" not in request_body("m", images)


def test_video_tokens_merge_two_frames_on_a_patch_server_and_none_elsewhere():
    frame = image_tokens("patches28", 320, 240)
    assert frame == math.ceil(320 / 28) * math.ceil(240 / 28) == 108
    video = VideoPart(tuple(ImagePart(j) for _, j in FRAMES[:15]))  # odd: the last pads a pair
    assert video_tokens("patches28", video) == 8 * frame
    assert video_tokens("openai", video) == 15 * image_tokens("openai", 320, 240)
    as_images = ModelRequest("o", (frames_then_task(FRAMES, "t")[1],), "X")
    as_video = ModelRequest("o", (frames_then_task(FRAMES, "t", WINDOW_OF)[1],), "X")
    saved = estimate_input_tokens(as_images, "patches28") - estimate_input_tokens(
        as_video, "patches28"
    )
    assert saved >= 16 * frame - 64  # half of 32 frames, less the labels' text


def test_cache_keys_and_transcripts_tell_videos_from_the_same_frames_as_images():
    as_images = ModelRequest("o", (frames_then_task(FRAMES, "t")[1],), "X")
    as_video = ModelRequest("o", (frames_then_task(FRAMES, "t", WINDOW_OF)[1],), "X")
    assert cache_key("openai", "m", "", as_images) != cache_key("openai", "m", "", as_video)
    # An image's key is what it always was, so caches made before video parts stay valid.
    one = ImagePart(FRAMES[0][1])
    plain = ModelRequest("o", (Message("user", (one,)),), "X")
    legacy = ModelRequest("o", (Message("user", (TextPart(f"image:{one.sha256}"),)),), "X")
    assert cache_key("openai", "m", "", plain) == cache_key("openai", "m", "", legacy)

    (message,) = _parts(as_video)
    videos = [p for p in message["parts"] if "video" in p]
    assert [len(v["video"]) for v in videos] == [16, 16]
    assert videos[0]["label"] == "t=4.00-7.75s, 16 frames every 0.25s"
    exchange = {
        "seq": 0, "role": "observer", "label": "w1", "model": "openai:m", "schema": "X",
        "attempt": 1, "sample": 0, "temperature": 0.0, "messages": [message], "reply": "{}",
        "reply_chars": 2, "refusal": None, "parsed": {}, "error": "", "ok": True,
        "cache_hit": False, "input_tokens": 1, "output_tokens": 1, "cached_input_tokens": 0,
        "latency_s": 0.1, "sent_at": 0.0,
    }  # fmt: skip
    page = transcript_section([exchange])
    assert "2 video(s)" in page and 'data-t="4.00"' in page and 'data-t="8.00"' in page


def test_frames_and_keys_hash_as_plain_sha256_in_pieces_that_keep_the_lock():
    """Hashed in pieces (``sha256_hex``) so that the interpreter lock is kept: the digests
    are SHA-256's own at every length around a piece, so keys made before stay valid."""
    import hashlib
    import os

    from gaze.models.protocol import HASH_PIECE, sha256_hex

    for size in (0, 1, HASH_PIECE - 1, HASH_PIECE, HASH_PIECE + 1, 3 * HASH_PIECE, 200_000):
        data = os.urandom(size)
        assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    frame = FRAMES[0][1]
    assert ImagePart(frame).sha256 == hashlib.sha256(frame).hexdigest()
    video = VideoPart(tuple(ImagePart(f) for _, f in FRAMES[:3]))
    joined = ",".join(hashlib.sha256(f).hexdigest() for _, f in FRAMES[:3]).encode()
    assert video.sha256 == hashlib.sha256(joined).hexdigest()
