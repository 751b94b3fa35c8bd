"""Frame-level injections (corruption, glitch, freeze, blur, low visibility) on any canvas: forge
v2's rendered rollouts and a user's own footage (``gaze.bench.probe``) alike. Each picks a free
window, queues an edit of the frames, and returns the reference event of what it did."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import cv2
import numpy as np

Busy = list[tuple[int, int]]
FrameEdit = Callable[[list[np.ndarray], int, int], None]
"""Changes frame f of an injection that starts at frame k, in place."""


class Canvas(Protocol):
    """What an injection needs of the clip it edits."""

    rng: np.random.Generator
    busy: Busy
    """Frame spans other injections hold (with a gap kept around them)."""
    frame_edits: list[Callable[[list[np.ndarray]], None]]

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the frames."""
        ...

    @property
    def n(self) -> int: ...

    @property
    def fps(self) -> float: ...

    def moving(self, f: int) -> bool:
        """Whether the picture moves at frame f (a freeze needs motion around it to show)."""
        ...

    def event(
        self,
        ftype: str,
        kind: str,
        start: int,
        end: int,
        description: str,
        regions: Sequence[dict[str, Any]] = (),
    ) -> dict[str, Any]:
        """The reference event of an injection over frames start..end."""
        ...


def window(plan: Canvas, length: int, ok: Callable[[int], bool], margin_s: float = 1.0) -> int:
    """A first frame for a run of ``length`` frames, clear of other injections and clip ends."""
    fps, n = plan.fps, plan.n
    lo, hi = round(margin_s * fps), n - round(margin_s * fps) - length
    gap = round(0.6 * fps)
    candidates = [
        k
        for k in range(lo, hi)
        if all(k + length + gap <= s or k >= e + gap for s, e in plan.busy) and ok(k)
    ]
    if not candidates:
        raise ValueError("no free frames left for another injection")
    k = int(plan.rng.choice(candidates))
    plan.busy.append((k, k + length))
    return k


def _frames_edit(plan: Canvas, length: int, ok: Callable[[int], bool], edit: FrameEdit) -> int:
    k = window(plan, length, ok)

    def apply(frames: list[np.ndarray]) -> None:
        for f in range(k, k + length):
            edit(frames, f, k)

    plan.frame_edits.append(apply)
    return k


def corruption(plan: Canvas) -> dict[str, Any]:
    length = int(plan.rng.integers(1, 3))
    rng = np.random.default_rng(int(plan.rng.integers(1 << 31)))
    cell = max(8, plan.size[0] // 20)

    def edit(frames: list[np.ndarray], f: int, k: int) -> None:
        img = frames[f].copy()
        for y in range(0, img.shape[0], cell):
            for x in range(0, img.shape[1], cell):
                if rng.random() < 0.5:
                    img[y : y + cell, x : x + cell] = rng.integers(0, 256, 3)
        frames[f] = img

    k = _frames_edit(plan, length, lambda f: True, edit)
    return plan.event(
        "frame_corruption",
        "corruption",
        k,
        k + length - 1,
        "blocky codec-like corruption covers about half of the frame",
    )


def glitch(plan: Canvas) -> dict[str, Any]:
    """One frame gone wrong: a flat green frame, a frame from elsewhere, a tear or a noise burst."""
    how = str(plan.rng.choice(["green", "foreign", "tear", "burst"]))
    n, fps = plan.n, plan.fps
    other = int(plan.rng.integers(0, n))
    rng = np.random.default_rng(int(plan.rng.integers(1 << 31)))

    def edit(frames: list[np.ndarray], f: int, k: int) -> None:
        img = frames[f]
        if how == "green":
            frames[f] = np.full_like(img, (40, 200, 40))
        elif how == "foreign":
            frames[f] = frames[other if abs(other - f) > fps else (f + n // 2) % n].copy()
        elif how == "tear":
            cut = img.shape[0] // 3 + int(rng.integers(0, img.shape[0] // 3))
            out = img.copy()
            out[cut:] = np.roll(img[cut:], img.shape[1] // 4, axis=1)
            frames[f] = out
        else:
            noise = rng.normal(0, 60, img.shape)
            frames[f] = np.clip(img + noise, 0, 255).astype(np.uint8)

    k = _frames_edit(plan, 1, lambda f: True, edit)
    return plan.event("frame_corruption", f"glitch_{how}", k, k, f"one frame is wrong ({how})")


def freeze(plan: Canvas) -> dict[str, Any]:
    """The picture stops while the arm is moving, then the video catches up."""
    fps = plan.fps
    length = max(2, round(float(plan.rng.uniform(0.5, 1.5)) * fps))

    def moving(k: int) -> bool:
        return all(plan.moving(f) for f in (k - 2, k - 1, k + length, k + length + 1))

    k = _frames_edit(
        plan, length, moving, lambda frames, f, k: frames.__setitem__(f, frames[k - 1].copy())
    )
    return plan.event(
        "frame_corruption",
        "freeze",
        k - 1,
        k + length - 1,
        f"the picture freezes for {length / fps:.1f} s while the arm is moving",
    )


def blur(plan: Canvas) -> dict[str, Any]:
    fps = plan.fps
    length = round(float(plan.rng.uniform(0.5, 2.0)) * fps)
    sigma = 0.011 * plan.size[0] * float(plan.rng.uniform(0.8, 1.4))
    k = _frames_edit(
        plan,
        length,
        lambda f: True,
        lambda frames, f, k: frames.__setitem__(f, cv2.GaussianBlur(frames[f], (0, 0), sigma)),
    )
    return plan.event("blur", "blur", k, k + length - 1, "the whole frame goes soft")


def low_visibility(plan: Canvas) -> dict[str, Any]:
    fps = plan.fps
    length = round(float(plan.rng.uniform(0.5, 2.0)) * fps)
    how = str(plan.rng.choice(["dark", "fog"]))

    def edit(frames: list[np.ndarray], f: int, k: int) -> None:
        img = frames[f].astype(np.float32)
        out = img * 0.13 if how == "dark" else img * 0.1 + 0.9 * img.mean()
        frames[f] = out.clip(0, 255).astype(np.uint8)

    k = _frames_edit(plan, length, lambda f: True, edit)
    return plan.event(
        "low_visibility",
        f"low_visibility_{how}",
        k,
        k + length - 1,
        "the scene goes nearly black" if how == "dark" else "the picture washes out to grey",
    )


FRAME_INJECTIONS: dict[str, Callable[[Canvas], dict[str, Any]]] = {
    "corruption": corruption,
    "glitch": glitch,
    "freeze": freeze,
    "blur": blur,
    "low_visibility": low_visibility,
}
