"""A clock that moves only when the test moves it, for anything that takes a
`clock` returning seconds (caches, leases)."""

from __future__ import annotations


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
