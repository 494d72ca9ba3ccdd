"""An editable price table (USD per 1M tokens) for cost estimates before a run and costs after.
A row is ``[input, output]`` or ``[input, output, batch input, batch output]``: the batch
service's prices (``--backend openai-batch``); a row without them costs half there, as the
OpenAI Batch API's discount is."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from analysis.core.errors import InputError

PRICES_FILE = Path(__file__).with_name("data") / "prices.json"
BATCH_DISCOUNT = 0.5  # the batch price where a row gives none


@dataclass(frozen=True)
class Price:
    input_per_m: float
    output_per_m: float
    batch_input_per_m: float | None = None
    batch_output_per_m: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_m + completion_tokens * self.output_per_m) / 1e6

    def batch(self) -> Price:
        """The price of the same tokens sent through the batch service."""
        i, o = self.batch_input_per_m, self.batch_output_per_m
        i = self.input_per_m * BATCH_DISCOUNT if i is None else i
        return Price(i, self.output_per_m * BATCH_DISCOUNT if o is None else o)


def _price(v: list) -> Price:
    if len(v) not in (2, 4):
        raise ValueError(f"{len(v)} numbers")
    return Price(*(float(x) for x in v))


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    p = Path(path) if path else PRICES_FILE
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
        return {k: _price(v) for k, v in raw.items() if not k.startswith("_")}
    except (OSError, json.JSONDecodeError, AttributeError, TypeError, ValueError) as e:
        raise InputError(
            str(p), None, None,
            f'expected {{"model": [input, output]}} or [input, output, batch input, batch '
            f"output] ({e})",
        ) from e  # fmt: skip


def price_of(model: str, prices: dict[str, Price], *, batch: bool = False) -> Price | None:
    """Exact name, else the longest known prefix (gpt-4o-2024-08-06 → gpt-4o); None if unknown.
    ``batch``: the batch service's price."""
    if model in prices:
        found = prices[model]
    else:
        matches = [k for k in prices if model.startswith(k)]
        if not matches:
            return None
        found = prices[max(matches, key=len)]
    return found.batch() if batch else found
