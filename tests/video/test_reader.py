"""Reading frames: grey levels from the luma plane match the converted picture's, in every pixel
format the decoders hand out, and shrunk frames have the sizes and colours of the whole frame."""

import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from gaze.bench.forge import forge_clip
from gaze.video.frames import fitted_size, resize_max_side
from gaze.video.reader import VideoReader


@pytest.fixture(scope="module", params=[".mp4", ".avi", ".gif", ".webm"])
def clip(request, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("reader") / f"c{request.param}"
    forge_clip(path, seed=7, failures=["camera_instability"])
    return path


def test_grey_samples_match_the_converted_frames(clip):
    with VideoReader(clip) as reader:
        checked = 0
        for _, picture in reader.pictures():
            for step in (1, 3):
                grey = picture.grey_sample(step)
                bgr = np.ascontiguousarray(picture.bgr()[::step, ::step])
                want = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY).astype(int)
                assert grey.shape == want.shape and grey.flags.c_contiguous
                # the same picture: within a couple of grey levels (rounding in two conversions)
                assert np.abs(grey.astype(int) - want).mean() < 2.0
            checked += 1
    assert checked == 80


def test_a_grey_sample_taken_before_conversion_equals_one_taken_after(clip):
    with VideoReader(clip) as reader:
        for _, picture in reader.pictures():
            before = picture.grey_sample(2)
            picture.bgr()
            assert np.array_equal(picture.grey_sample(2), before)  # frames compare alike
            break


def test_shrunk_frames_have_the_fitted_size_and_the_same_picture(clip):
    with VideoReader(clip) as reader:
        for _, picture in reader.pictures():
            small = picture.bgr_within(160)
            fitted = fitted_size(picture.width, picture.height, 160)
            assert (small.shape[1], small.shape[0]) == fitted
            reference = resize_max_side(picture.bgr(), 160)
            assert np.abs(small.astype(int) - reference.astype(int)).mean() < 3.0
            assert picture.bgr_within(10_000) is picture.bgr()  # never upscaled


def test_claims_and_times(clip):
    with VideoReader(clip) as reader:
        assert reader.claimed_fps == pytest.approx(10.0)
        assert reader.claimed_count == 80
        assert reader.codec
        times = [t for t, _ in reader.pictures()]
    assert len(times) == 80
    assert all(t is not None for t in times)
    assert times[0] == pytest.approx(0.0, abs=1e-3)
    assert all(b > a for a, b in zip(times, times[1:], strict=False))


def test_a_frame_is_scaled_once_per_size(clip):
    with VideoReader(clip) as reader:
        for _, picture in reader.pictures():
            small = picture.bgr_within(160)
            assert picture.bgr_within(160) is small  # the initial frame and its JPEG share it
            assert picture.bgr_within(100).shape[1::-1] == fitted_size(
                picture.width, picture.height, 100
            )
            break


def test_pictures_decoded_ahead_are_the_pictures_decoded_in_turn(clip):
    def frames(ahead: int) -> list[tuple[float | None, bytes]]:
        with VideoReader(clip) as reader:
            return [(t, p.bgr().tobytes()) for t, p in reader.pictures(ahead=ahead)]

    in_turn = frames(0)
    assert len(in_turn) == 80
    assert frames(4) == in_turn


def test_a_caller_that_stops_early_stops_decoding_ahead(clip):
    with VideoReader(clip) as reader:
        for index, _ in enumerate(reader.pictures(ahead=2)):
            if index == 3:
                break  # the generator goes with the loop, and closes its thread
        assert not any(t.name == "gaze-decode" for t in threading.enumerate())


def test_a_reader_closed_while_decoding_ahead_stops_its_thread_first(clip):
    reader = VideoReader(clip)
    pictures = reader.pictures(ahead=2)
    next(pictures)  # the thread is decoding in the container now
    reader.close()  # stops the thread before closing the container (no crash, no stray thread)
    assert not any(t.name == "gaze-decode" for t in threading.enumerate())
