"""A clock that moves only when the test moves it, for anything that takes a
`clock` returning seconds (caches, leases), and a fixed instant for records."""

from __future__ import annotations

from datetime import UTC, datetime

#: An aware instant with microseconds (a backend that drops them shows).
T0 = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
