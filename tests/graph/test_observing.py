"""The observers keep only observations of windows as the decoded clip has them: a window handed
over early that decoding later saw otherwise (timestamps that contradict the frame count) is
observed again."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from gaze.graph.observing import observe_windows
from gaze.graph.services import RunServices
from gaze.models.scripted import ScriptedBackbone, minimal_instance
from gaze.settings.caller import build_caller
from gaze.settings.context import GazeContext
from gaze.video.windows import SamplingSettings, Window


class HandedOtherwise:
    """A clip store whose window 1 was handed over as [4, 8) s, but decoded as [4, 7.5) s with a
    frame fewer."""

    early = [
        Window(0, 0.0, 4.0, [0, 10], [0.0, 1.0]),
        Window(1, 4.0, 8.0, [40, 50, 60], [4.0, 5.0, 6.0]),
    ]
    final = [early[0], Window(1, 4.0, 7.5, [40, 50], [4.0, 5.0])]

    async def windows(self, path):
        for window in self.early:
            yield window

    async def decoded(self, path):
        await asyncio.sleep(0.2)  # decoding goes on while the early calls go out
        return SimpleNamespace(windows=self.final)

    def frames(self, path, window):
        return [(t, b"\xff\xd8 not read by the scripted backbone") for t in window.timestamps_s]


def test_a_window_handed_over_otherwise_than_decoded_is_observed_again():
    backbone = ScriptedBackbone(lambda r: minimal_instance(r.json_schema), model="observe")
    # two-window segments: the pair is complete, so asked, as soon as both are handed over
    ctx = GazeContext(use_cache=False, max_segment_windows=2, max_frames_per_call=32)

    async def run():
        caller = build_caller(ctx, backbones={"default": backbone}, check=False)
        svc = RunServices(caller=caller, sampling=SamplingSettings(), clips=HandedOtherwise())
        try:

            async def no_memory():
                return None

            update = await observe_windows(svc, ctx, "stack the cups", "clip.mp4", no_memory())
            return update, svc.observed.done
        finally:
            await caller.aclose()

    update, progress = asyncio.run(run())
    assert progress == [0, 1]  # window 1's progress note is sent once
    spans = [(o["window"], o["start_s"], o["end_s"]) for o in update["observations"]]
    assert spans == [(0, 0.0, 4.0), (1, 4.0, 7.5)]  # as decoded
    texts = [
        "\n".join(p.text for m in r.messages for p in m.parts if hasattr(p, "text"))
        for r in backbone.requests
    ]
    # the pair was asked once as handed over, and again as decoded
    assert len(backbone.requests) == 2 and all("window 1 (" in t for t in texts)
    assert [("4.00-7.50 s" in t) for t in texts] == [False, True]


class LastWindowBeforeTheClip:
    """A clip store that hands over all three windows, the last as decoding ends, and delivers
    the decoded clip only once the observers have asked for every window (or a second later)."""

    handed = [
        Window(0, 0.0, 4.0, [0, 10], [0.0, 1.0]),
        Window(1, 4.0, 8.0, [40, 50], [4.0, 5.0]),
        Window(2, 8.0, 10.0, [80, 90], [8.0, 9.0]),
    ]

    def __init__(self, backbone: ScriptedBackbone) -> None:
        self.backbone = backbone
        self.asked_before_the_clip = 0

    async def windows(self, path):
        for window in self.handed:
            yield window

    async def decoded(self, path):
        for _ in range(100):
            if len(self.backbone.requests) == 2:
                break
            await asyncio.sleep(0.01)
        self.asked_before_the_clip = len(self.backbone.requests)
        return SimpleNamespace(windows=self.handed)

    def frames(self, path, window):
        return [(t, b"\xff\xd8 not read by the scripted backbone") for t in window.timestamps_s]


def test_the_last_windows_are_asked_for_before_the_decoded_clip_arrives():
    """A long clip's last observer call waited for the decoded clip's message (NumPy loading
    where it is read); its windows are all it needs."""
    backbone = ScriptedBackbone(lambda r: minimal_instance(r.json_schema), model="observe")
    ctx = GazeContext(use_cache=False, max_segment_windows=2, max_frames_per_call=32)

    async def run():
        caller = build_caller(ctx, backbones={"default": backbone}, check=False)
        store = LastWindowBeforeTheClip(backbone)
        svc = RunServices(caller=caller, sampling=SamplingSettings(), clips=store)
        try:

            async def no_memory():
                return None

            update = await observe_windows(svc, ctx, "stack the cups", "clip.mp4", no_memory())
            return update, store.asked_before_the_clip
        finally:
            await caller.aclose()

    update, asked_before_the_clip = asyncio.run(run())
    assert asked_before_the_clip == 2  # windows 0-1 together, then window 2 alone
    assert len(backbone.requests) == 2  # and neither asked again once the clip came
    assert [o["window"] for o in update["observations"]] == [0, 1, 2]
