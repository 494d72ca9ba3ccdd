"""An editable price table (USD per 1M tokens) for cost estimates before a run and costs after."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from analysis.core.errors import InputError

PRICES_FILE = Path(__file__).with_name("data") / "prices.json"


@dataclass(frozen=True)
class Price:
    input_per_m: float
    output_per_m: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_m + completion_tokens * self.output_per_m) / 1e6


def load_prices(path: str | Path | None = None) -> dict[str, Price]:
    p = Path(path) if path else PRICES_FILE
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
        return {k: Price(float(v[0]), float(v[1])) for k, v in raw.items() if not k.startswith("_")}
    except (OSError, json.JSONDecodeError, TypeError, ValueError, IndexError) as e:
        raise InputError(str(p), None, None, f'expected {{"model": [input, output]}} ({e})') from e


def price_of(model: str, prices: dict[str, Price]) -> Price | None:
    """Exact name, else the longest known prefix (gpt-4o-2024-08-06 → gpt-4o); None if unknown."""
    if model in prices:
        return prices[model]
    matches = [k for k in prices if model.startswith(k)]
    return prices[max(matches, key=len)] if matches else None
