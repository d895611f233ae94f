"""Field violations: a request's problems collected, then raised at once as one
INVALID_ARGUMENT (field paths as in the proto, snake_case). The bottom rung of
the converters: every other one reports through it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from agentd.runtime.errors import FieldViolation, InvalidArgument

T = TypeVar("T")


class Violations:
    """Collects field violations, then raises them all at once."""

    def __init__(self) -> None:
        self.items: list[FieldViolation] = []
        self.reason = "INVALID_REQUEST"

    def add(self, field: str, description: str, reason: str | None = None) -> None:
        self.items.append(FieldViolation(field, description))
        if reason is not None and self.reason == "INVALID_REQUEST":
            self.reason = reason

    def require(self, value: str, field: str) -> None:
        if not value:
            self.add(field, "is required")

    def require_all(self, **fields: str) -> None:
        """`require` of each field (named by its keyword) in turn."""
        for field, value in fields.items():
            self.require(value, field)

    def absorb(self, err: InvalidArgument, under: str = "", *, reason: bool = True) -> None:
        """The runtime's own violations, each field under `under` (`type` →
        `signal.type`), with its reason unless `reason` is false."""
        for item in err.violations:
            self.add(f"{under}.{item.field}" if under else item.field, item.description, err.reason if reason else None)

    def collect(self, build: Callable[[], T], under: str = "") -> T | None:
        """`build()`, or None with its InvalidArgument absorbed: one error then
        lists the runtime's problems together with the transport's."""
        try:
            return build()
        except InvalidArgument as err:
            self.absorb(err, under)
            return None

    def check(self) -> None:
        if self.items:
            raise InvalidArgument.fields(self.items, self.reason)
