"""The ``llm`` similarity judge: a backbone rates predicted vs reference descriptions 0-5
(s = rating / 5). Ratings go through the caller, so they are cached and a rerun asks nothing."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from gaze.matching.similarity import Pair
from gaze.models import defaults
from gaze.models.caller import Caller, CallRecord
from gaze.models.protocol import Message
from gaze.models.structured import ask
from gaze.prompts import load_prompt


class Rating(BaseModel):
    """The judge's rating of one pair."""

    model_config = ConfigDict(extra="forbid")
    reason: str
    rating: int = Field(ge=0, le=5)


class LLMJudge:
    name = "llm"
    reads = "description"

    def __init__(self, caller: Caller, max_retries: int = defaults.MAX_RETRIES) -> None:
        self.caller = caller
        self.max_retries = max_retries
        self.records: list[CallRecord] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    async def ascore(self, pairs: Sequence[Pair]) -> np.ndarray:
        prompt = load_prompt("similarity")

        async def one(pair: Pair) -> float:
            messages = [
                Message.text("system", prompt.render(predicted=pair[0], reference=pair[1])),
                Message.text("user", "Rate the pair."),
            ]
            result = await ask(
                self.caller, "similarity", messages, Rating, max_retries=self.max_retries
            )
            self.records += result.records
            if result.value is None:
                raise RuntimeError(f"the similarity judge gave no usable rating: {result.error}")
            return result.value.rating / 5.0

        return np.array(await asyncio.gather(*(one(p) for p in pairs)), dtype=np.float64)

    def score(self, pairs: Sequence[Pair]) -> np.ndarray:
        # One event loop for the judge's whole life: its caller's limits and its SDK client's
        # connections belong to the loop they first ran on (a new loop per call failed with
        # "bound to a different event loop" when a scoring run judged twice, as --versus does)
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            weakref.finalize(self, self._loop.close)  # a judge nobody closed leaks no sockets
        return self._loop.run_until_complete(self.ascore(pairs))

    def close(self) -> None:
        """Close the caller (its cache) and the judge's event loop."""
        if self._loop is not None:
            self._loop.run_until_complete(self.caller.aclose())
            self._loop.close()
            self._loop = None
