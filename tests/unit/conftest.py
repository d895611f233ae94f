"""Fixtures for the runtime tests: an in-memory cache on a clock that moves
only when the test moves it (a module overrides `clock` to start elsewhere)."""

from __future__ import annotations

import pytest

from agentd.runtime.cache import InMemoryServerCache
from support.clocks import Clock


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cache(clock: Clock) -> InMemoryServerCache:
    return InMemoryServerCache(clock=clock)
