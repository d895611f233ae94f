"""Fixtures for the backend tests: a storage and a notification store of each
kind, the Redis ones on the session's redis-server under a key prefix of their
own, cleared afterwards."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.backends.redis_notifications import RedisNotificationStore
from agentd.backends.redis_storage import RedisStorage
from agentd.backends.sqlite_notifications import SQLiteNotificationStore
from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime.notifications import InMemoryNotificationStore, NotificationStore
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


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[NotificationStore]:
    if request.param == "memory":
        yield InMemoryNotificationStore()
        return
    backend: NotificationStore
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        backend = RedisNotificationStore(server.url, key_prefix=f"agentd-test-notifications:{uuid.uuid4().hex[:12]}:")
    else:
        backend = SQLiteNotificationStore(tmp_path / "notifications.db")
    try:
        yield backend
    finally:
        try:
            if isinstance(backend, RedisNotificationStore):
                await backend.clear()
        finally:
            await backend.close()
