"""What calls cost: list prices from ``genai-prices`` (pydantic's maintained price data, read
from the installed package: never fetched at run time), a user table of the same shape as
before that extends or overrides it (``GAZE_PRICES`` or ``prices_file``), and flat per-million
prices that override both.

A model's price is its price per million tokens at the base tier: each gaze request is far
below the 200k-token prompts that some providers bill higher."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gaze.errors import GazeInputError

PROVIDER_IDS = {"openai": "openai", "gemini": "google"}
"""gaze's provider names -> genai-prices' provider ids (scripted, vLLM and other local
backbones have no list price)."""


BATCH_RATE = 0.5
"""What a call through OpenAI's Batch API or Gemini's batch mode costs, as a share of the same
call live (both bill half)."""


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
        self,
        table: dict[str, Price],
        as_of: str = "",
        flat_in: float = 0.0,
        flat_out: float = 0.0,
        listed: bool = False,
        rate: float = 1.0,
        full_price_roles: frozenset[str] = frozenset(),
    ) -> None:
        self.table = table
        """The user's own prices (they win over the list prices)."""
        self.as_of = as_of
        self.flat = Price(flat_in, flat_in, flat_out) if flat_in or flat_out else None
        self.listed = listed
        """Whether models missing from ``table`` take genai-prices' list price."""
        self.rate = rate
        """The share of the price billed (``BATCH_RATE`` for a batch run)."""
        self.full_price_roles = full_price_roles
        """Roles whose calls are billed in full whatever ``rate`` (a batch run's live roles)."""

    def at_rate(self, rate: float, full_price_roles: frozenset[str] = frozenset()) -> Pricing:
        """The same prices billed at ``rate`` (a batch run's), but for ``full_price_roles``."""
        return Pricing(
            self.table,
            self.as_of,
            *self._flat(),
            listed=self.listed,
            rate=rate,
            full_price_roles=full_price_roles,
        )

    def _flat(self) -> tuple[float, float]:
        return (self.flat.input, self.flat.output) if self.flat is not None else (0.0, 0.0)

    @staticmethod
    def load(extra_file: str | None = None, flat_in: float = 0.0, flat_out: float = 0.0) -> Pricing:
        """List prices, extended by ``extra_file`` (reads files: not on an event loop). The
        price data loads later, in the background (``preload``)."""
        table: dict[str, Price] = {}
        if extra_file:
            try:
                extra = json.loads(Path(extra_file).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise GazeInputError(f"price table {extra_file}: cannot read it ({exc})") from None
            table.update(_prices(extra, extra_file))
        return Pricing(table, f"genai-prices {_version()}", flat_in, flat_out, listed=True)

    def preload(self, models: Iterable[str]) -> None:
        """Look up the list prices of ``models`` in the background (about 0.25 s of imports
        and 15 ms to read the price data, the first time in a process). The caller asks once
        its first requests are on the wire (``Caller.first_requests_out``): started with the
        run, or when the first request was handed over, the import delayed that request by
        0.03-0.06 s on a busy core; read when the report was made, the data added 15 ms after
        the last reply."""
        wanted = [m for m in models if self.flat is None and m not in self.table]
        if self.listed and wanted:
            threading.Thread(
                target=lambda: [list_price(m) for m in wanted], daemon=True, name="gaze-prices"
            ).start()

    def price_of(self, model: str) -> Price | None:
        if self.flat is not None:
            return self.flat
        if model in self.table:
            return self.table[model]
        return list_price(model) if self.listed else None

    def cost(self, records: list[Any]) -> float:
        """USD of the requests actually billed (cache hits replay, they cost nothing)."""
        total = 0.0
        for record in records:
            price = self.price_of(record["model"])
            if price is None or record["cache_hit"]:
                continue
            cached = min(record.get("cached_input_tokens", 0), record["input_tokens"])
            usd = (record["input_tokens"] - cached) * price.input
            usd += cached * price.cached_input + record["output_tokens"] * price.output
            total += usd * (1.0 if record.get("role") in self.full_price_roles else self.rate)
        return round(total / 1e6, 6)


@functools.cache
def _price_data() -> Any:
    import genai_prices

    return genai_prices


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("genai-prices")
    except PackageNotFoundError:  # pragma: no cover - a dependency of gaze
        return "?"


def _listed_as(model: str) -> tuple[str, str] | None:
    """(genai-prices' provider id, model name) of ``provider:model``; None for a provider it
    does not list (scripted, local servers) or a name missing."""
    provider, _, name = model.partition(":")
    provider_id = PROVIDER_IDS.get(provider)
    return (provider_id, name) if provider_id is not None and name else None


@functools.cache
def list_price(model: str) -> Price | None:
    """genai-prices' price of ``provider:model`` per million tokens (None: not listed)."""
    listed = _listed_as(model)
    if listed is None:
        return None
    provider_id, name = listed
    prices = _price_data()

    def per_million(usage: Any) -> float:
        priced = prices.calc_price(usage, model_ref=name, provider_id=provider_id)
        return float(priced.total_price * 1000)  # 1,000 tokens: the base tier

    try:
        return Price(
            per_million(prices.Usage(input_tokens=1000)),
            per_million(prices.Usage(input_tokens=1000, cache_read_tokens=1000)),
            per_million(prices.Usage(output_tokens=1000)),
        )
    except LookupError:
        return None


@functools.cache
def listed_context(model: str) -> int | None:
    """genai-prices' context window of ``provider:model`` in tokens (None: not listed): what
    a hosted API, which does not report it, takes in one request."""
    listed = _listed_as(model)
    if listed is None:
        return None
    provider_id, name = listed
    try:
        _, found = (
            _price_data()
            .data_snapshot.get_snapshot()
            .find_provider_model(name, None, provider_id, None)
        )
    except LookupError:
        return None
    window = getattr(found, "context_window", None)
    return window if isinstance(window, int) and window > 0 else None
