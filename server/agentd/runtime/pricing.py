"""agentd.toml's `[pricing]`: USD per million tokens of each provider/model,
read at start-up; token-cost-control prices its budgets with it, and loads
only when an agent names it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from agentd.runtime.chunks import Usage

__all__ = ["Price", "parse_prices"]


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million input and output tokens."""

    input: Decimal = Decimal(0)
    output: Decimal = Decimal(0)

    def micro_usd(self, usage: Usage) -> int:
        """The cost of `usage` in micro-dollars, rounded up."""
        input_tokens, output_tokens = usage.input_tokens, usage.output_tokens
        if input_tokens is None and output_tokens is None:
            input_tokens = usage.total_tokens  # nothing to split by: priced as input
        cost = Decimal(input_tokens or 0) * self.input + Decimal(output_tokens or 0) * self.output
        return max(0, math.ceil(cost))


def decimal_of(value: Any, where: str) -> Decimal:
    """`value` (a number or a numeric string, not a bool) as a Decimal;
    ValueError "<where> must be a number" otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        raise ValueError(f"{where} must be a number, got {value!r}")
    try:
        return Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"{where} must be a number, got {value!r}") from None


def _decimal(value: Any, where: str) -> Decimal:
    number = decimal_of(value, f"{where}:")
    if not number.is_finite() or number < 0:
        raise ValueError(f"{where}: must be a finite number >= 0, got {value!r}")
    return number


def parse_prices(table: Mapping[str, Any] | None, where: str = "pricing") -> dict[str, Price]:
    """`{"provider/model": {"input": usd_per_million, "output": usd_per_million}}`
    (a missing side costs 0; Price values pass through). ValueError names the bad key."""
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise ValueError(f"{where}: must be a table of provider/model = {{ input, output }}")
    prices: dict[str, Price] = {}
    for model, entry in table.items():
        at = f'{where}."{model}"'
        if not isinstance(model, str) or "/" not in model:
            raise ValueError(f"{at}: the key must be a provider/model spec")
        if isinstance(entry, Price):
            prices[model] = entry
            continue
        if not isinstance(entry, Mapping):
            raise ValueError(f"{at}: must be a table with input and output (USD per million tokens)")
        unknown = sorted(str(k) for k in entry if k not in ("input", "output"))
        if unknown:
            raise ValueError(f"{at}: unknown key(s) {', '.join(unknown)} (allowed: input, output)")
        prices[model] = Price(
            input=_decimal(entry.get("input", 0), f"{at}.input"),
            output=_decimal(entry.get("output", 0), f"{at}.output"),
        )
    return prices
