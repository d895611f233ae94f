"""Fixtures for every folder: an agentd server in-process on a loopback port
(agentd.toml's agents), a real redis-server for the session, and what the
local model is sent. Plain helpers
are in the `support` package; folders add their own fixtures in their
conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agentd.runtime.models.local import LocalModel
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
