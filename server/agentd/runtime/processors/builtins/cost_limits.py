"""A token-cost-control limit that may depend on the request: a number, a
function of the request context (Python), or a table keyed by one
request-context value (agentd.toml, a call's options)::

    {"by": "tier", "limits": {"free": 0.5, "pro": 5}, "default": 0.5}

A table needs `default`: a caller names its own request context, so a value the
table lacks must not escape the budget. A function whose result is not a
positive number (or that raises) leaves the limit unset for that request, as
Mastra's does, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from agentd.runtime.pricing import decimal_of

log = logging.getLogger("agentd.processors.token_cost_control")

__all__ = ["Limit", "LimitSpec"]

#: What a limit option may be.
LimitSpec = float | int | Mapping[str, Any] | Callable[[Mapping[str, Any]], Any]

_TABLE_KEYS = ("by", "limits", "default")


def _positive(value: Any, where: str, whole: bool) -> Decimal:
    """A finite number > 0 (a whole one when `whole`); ValueError naming `where`."""
    number = decimal_of(value, where)
    if not number.is_finite() or number <= 0:
        raise ValueError(f"{where} must be greater than 0, got {value!r}")
    if whole and number != number.to_integral_value():
        raise ValueError(f"{where} must be a whole number greater than 0, got {value!r}")
    return number


@dataclass(frozen=True, slots=True)
class Limit:
    """One limit (`max_cost` in USD, or `max_tokens`) and how a request resolves it."""

    name: str
    fixed: Decimal | None = None
    function: Callable[[Mapping[str, Any]], Any] | None = None
    by: str | None = None
    table: dict[str, Decimal] = field(default_factory=dict)

    @classmethod
    def parse(cls, spec: LimitSpec | None, name: str, *, whole: bool = False) -> Limit | None:
        where = f"token-cost-control: {name}"
        if spec is None:
            return None
        if callable(spec):
            return cls(name, function=spec)
        if not isinstance(spec, Mapping):
            return cls(name, fixed=_positive(spec, where, whole))
        unknown = sorted(str(k) for k in spec if k not in _TABLE_KEYS)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (a table takes: {', '.join(_TABLE_KEYS)})")
        by, limits = spec.get("by"), spec.get("limits")
        if not isinstance(by, str) or not by:
            raise ValueError(f"{where}.by must name a request-context key")
        if not isinstance(limits, Mapping):
            raise ValueError(f"{where}.limits must be a table of request-context values to limits")
        if "default" not in spec:
            raise ValueError(f"{where}.default is required (the limit of a value the table does not name)")
        table = {str(k): _positive(v, f"{where}.limits.{k}", whole) for k, v in limits.items()}
        return cls(name, fixed=_positive(spec["default"], f"{where}.default", whole), by=by, table=table)

    def resolve(self, context: Mapping[str, Any]) -> Decimal | None:
        """This request's limit, or None when a function gave no usable one."""
        if self.by is not None:
            value = context.get(self.by)
            return self.table.get(value, self.fixed) if isinstance(value, str) else self.fixed
        if self.function is None:
            return self.fixed
        try:
            return _positive(self.function(context), self.name, whole=False)
        except Exception as exc:
            log.warning("token-cost-control: the %s function gave no limit (%s); not checked", self.name, exc)
            return None
