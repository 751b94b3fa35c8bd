"""Grid mode: one image per window, its frames tiled in time order with each tile's time stamped
on it; encoded once per clip and sent byte for byte by every call that sees the window."""

from __future__ import annotations

import cv2
import numpy as np

from gaze.cli.main import run
from gaze.video.clip import open_clip
from gaze.video.grid import grid_shape
from gaze.video.store import window_frames
from gaze.video.windows import SamplingSettings
from tests.cli.test_real_paths import on_server
from tests.standin import StandIn, clip_work, minimal_chat


def test_grid_shapes_are_as_square_as_possible():
    assert [grid_shape(n) for n in (1, 2, 6, 12, 16)] == [(1, 1), (1, 2), (2, 3), (3, 4), (4, 4)]


def test_each_window_is_one_stamped_grid_at_the_longest_side(forge_dir, forge_rows):
    settings = SamplingSettings(grid=True, max_side=640)
    clip = open_clip(forge_dir / forge_rows["clean"].video, settings, encode=True)
    assert sorted(clip.grids) == [w.index for w in clip.windows]
    shown = window_frames(clip, [w.index for w in clip.windows])
    assert [t for t, _ in shown] == [w.timestamps_s[0] for w in clip.windows]
    assert window_frames(clip, [0])[0][1] is clip.grids[0]  # the same bytes every time
    grid = cv2.imdecode(np.frombuffer(clip.grids[0], np.uint8), cv2.IMREAD_COLOR)
    rows, columns = grid_shape(len(clip.windows[0].frame_indices))
    assert (rows, columns) == (4, 4)
    assert 600 <= max(grid.shape[:2]) <= 640
    tile_h, tile_w = grid.shape[0] // rows, grid.shape[1] // columns
    for row in range(rows):  # every tile carries its time: a black box with white text
        for column in range(columns):
            top, left = row * tile_h, column * tile_w
            corner = grid[top : top + 12, left : left + 40]
            assert (corner < 40).mean() > 0.3 and (corner > 200).any()


def test_grid_mode_sends_one_image_per_window_and_records_it(forge_dir, forge_rows, capsys):
    row = forge_rows["clean"]
    with StandIn(responder=minimal_chat) as server:
        code = run(on_server(row, forge_dir, server, "--grid", "--json", "--no-cache"))
        observers = [
            s.body
            for s in clip_work(server.seen)
            if s.body["response_format"]["json_schema"]["name"] == "WindowObservations"
        ]
    captured = capsys.readouterr()
    assert code == 0, captured.err
    images = []
    for body in observers:
        parts = [
            p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"]
        ]
        images.append(sum(p["type"] == "image_url" for p in parts))
    # one grid per window; one observer call sees the pair of windows
    assert sorted(images) == [2]
    assert '"grid": true' in captured.out
