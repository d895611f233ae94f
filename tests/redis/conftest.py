"""Fixtures for the backend tests: a storage of each kind, the Redis one on the
session's redis-server under a key prefix of its own, dropped afterwards."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.backends.redis_storage import RedisStorage
from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime.storage import InMemoryStorage, Storage
from redis_server import RedisServer
from support.storage import drop_redis_keys, unique_prefix


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    store: Storage
    if request.param == "memory":
        store = InMemoryStorage()
    elif request.param == "sqlite":
        store = SQLiteStorage(tmp_path / "data" / "agentd.db")
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        store = RedisStorage(server.url, key_prefix=unique_prefix())
    try:
        yield store
    finally:
        try:
            if isinstance(store, RedisStorage):
                await drop_redis_keys(store)
        finally:
            await store.close()
