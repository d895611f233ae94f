"""Fixtures for every folder: an agentd server in-process on a loopback port
(agentd.toml's agents), a real redis-server for the session, and what the
local model is sent; every async test runs on the event loop `agentd serve`
runs on by default, uvloop ($AGENTD_TEST_LOOP=asyncio: asyncio's). Plain helpers
are in the `support` package; folders add their own fixtures in their
conftest.py."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

import pytest
import uvloop

from agentd.runtime.models.local import LocalModel
from redis_server import RedisServer, running_redis_server
from support.server import Running, serving
from support.watchdog import timeout_timer, watched

#: Per-test timeouts that end a hung test on uvloop too (support/watchdog.py).
pytest_timeout_set_timer = timeout_timer

#: The event loops tests can run on, by $AGENTD_TEST_LOOP.
LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "uvloop": watched(uvloop.new_event_loop),
    "asyncio": watched(asyncio.new_event_loop),
}


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    name = os.environ.get("AGENTD_TEST_LOOP", "uvloop")
    if name not in LOOPS:
        raise pytest.UsageError(f"AGENTD_TEST_LOOP={name!r}: choose one of {', '.join(LOOPS)}")
    return {name: LOOPS[name]}


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    async with serving() as running:
        yield running


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server on a free loopback port for the session (fails, never skips, when missing)."""
    yield from running_redis_server()


@pytest.fixture
def model_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """One entry per local model call: the texts of the user messages it was sent."""
    calls: list[list[str]] = []
    original = LocalModel.stream

    def spy(model: LocalModel, request: Any) -> Any:
        calls.append([m.text for m in request.prompt if m.role == "user"])
        return original(model, request)

    monkeypatch.setattr(LocalModel, "stream", spy)
    return calls
