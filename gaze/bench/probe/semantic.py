"""Semantic probes for model methods: variants whose answer is known without a span. The clip
with another clip's instruction (instruction consistency violated, IA falls), played backwards
(progress falls), cut before its end (the task left incomplete), its first half played twice
(no progress). Each names the dimension a method that saw it should report in, and the score
that should move."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Expectation:
    """What a method that saw a semantic probe should say."""

    dimension: str
    """The codebook dimension an event of it belongs to."""
    score: str
    """The score that should fall against the original's: ``ia`` or ``progress``."""
    meaning: str


EXPECTED = {
    "mismatch": Expectation("instruction_consistency", "ia", "another clip's instruction"),
    "reversed": Expectation("task_progress", "progress", "the clip played backwards"),
    "cut": Expectation("task_progress", "progress", "the clip cut at 55 % of its length"),
    "loop": Expectation("task_progress", "progress", "the first half played twice"),
}
CUT_AT = 0.55
STOCK_INSTRUCTIONS = (
    "fold the towel in half",
    "open the top drawer",
    "pour water from the cup into the bowl",
    "stack the red block on the blue block",
)
"""Instructions a lone clip is given for ``mismatch`` when no other clip lends one."""


def _reversed(frames: list[np.ndarray]) -> list[np.ndarray]:
    return frames[::-1]


def _cut(frames: list[np.ndarray]) -> list[np.ndarray]:
    return frames[: max(2, round(CUT_AT * len(frames)))]


def _loop(frames: list[np.ndarray]) -> list[np.ndarray]:
    half = frames[: len(frames) // 2]
    return half + half


FRAMES_OF: dict[str, Callable[[list[np.ndarray]], list[np.ndarray]]] = {
    "mismatch": lambda frames: frames,
    "reversed": _reversed,
    "cut": _cut,
    "loop": _loop,
}


def other_instruction(own: str, others: list[str], rng: np.random.Generator) -> str:
    """An instruction for ``mismatch``: another clip's, else a stock one, never the clip's own."""
    pool = [i for i in others if i.strip().lower() != own.strip().lower()]
    pool = pool or [i for i in STOCK_INSTRUCTIONS if i != own.strip().lower()]
    return str(rng.choice(pool))
