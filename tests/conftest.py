"""Fixtures for every folder: an agentd server in-process on a loopback port
(agentd.toml's agents) and a real redis-server for the session. Plain helpers
are in the `support` package; folders add their own fixtures in their
conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from redis_server import RedisServer, running_redis_server
from support.server import Running, serving


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with serving() as running:
        yield running


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server on a free loopback port for the session (fails, never skips, when missing)."""
    yield from running_redis_server()
