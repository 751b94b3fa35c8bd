"""What calls cost: a dated default price table for common hosted models (``prices.json``),
which the user extends or overrides with a file of the same shape (``GAZE_PRICES`` or
``prices_file``), and flat per-million prices that override both."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from gaze.errors import GazeInputError


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    cached_input: float
    output: float


def _prices(data: Any, where: str) -> dict[str, Price]:
    try:
        return {
            str(model): Price(
                float(p["input"]), float(p.get("cached_input", p["input"])), float(p["output"])
            )
            for model, p in data["models"].items()
        }
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise GazeInputError(
            f"price table {where}: expected {{'models': {{'provider:model': {{'input': USD, "
            f"'output': USD, 'cached_input'?: USD}}}}}} ({exc})"
        ) from None


class Pricing:
    """Prices by ``provider:model``; a model without a price costs nothing known (0)."""

    def __init__(
        self, table: dict[str, Price], as_of: str = "", flat_in: float = 0.0, flat_out: float = 0.0
    ) -> None:
        self.table = table
        self.as_of = as_of
        self.flat = Price(flat_in, flat_in, flat_out) if flat_in or flat_out else None

    @staticmethod
    def load(extra_file: str | None = None, flat_in: float = 0.0, flat_out: float = 0.0) -> Pricing:
        """The default table, extended by ``extra_file`` (reads files: not on an event loop)."""
        default = json.loads(
            (resources.files("gaze.models") / "prices.json").read_text(encoding="utf-8")
        )
        table = _prices(default, "prices.json")
        if extra_file:
            try:
                extra = json.loads(Path(extra_file).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise GazeInputError(f"price table {extra_file}: cannot read it ({exc})") from None
            table.update(_prices(extra, extra_file))
        return Pricing(table, str(default.get("as_of", "")), flat_in, flat_out)

    def price_of(self, model: str) -> Price | None:
        return self.flat or self.table.get(model)

    def cost(self, records: list[Any]) -> float:
        """USD of the requests actually billed (cache hits replay, they cost nothing)."""
        total = 0.0
        for record in records:
            price = self.price_of(record["model"])
            if price is None or record["cache_hit"]:
                continue
            cached = min(record.get("cached_input_tokens", 0), record["input_tokens"])
            total += (record["input_tokens"] - cached) * price.input
            total += cached * price.cached_input + record["output_tokens"] * price.output
        return round(total / 1e6, 6)
