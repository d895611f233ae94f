"""Fixtures for the service tests: a server with one `chat` agent whose memory
is an in-memory storage the test can read too."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage
from support.server import Running, serving


@pytest.fixture
def storage() -> InMemoryStorage:
    return InMemoryStorage()


@pytest.fixture
async def running(storage: InMemoryStorage) -> AsyncIterator[Running]:
    async with serving([Agent(id="chat", memory=Memory(storage))], storage=storage) as running:
        yield running
