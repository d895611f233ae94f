"""What one shared `Storage.list_threads` (cursor, page and next cursor, over
each backend's `select_threads`) makes the same on every backend: a limit
below one is an empty page without a cursor (the in-memory store used to
return all but the last thread for a negative limit)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentd.backends.redis_storage import RedisStorage
from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime.storage import InMemoryStorage, Storage, Thread
from redis_server import RedisServer

T0 = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    store: Storage
    if request.param == "memory":
        store = InMemoryStorage()
    elif request.param == "sqlite":
        store = SQLiteStorage(tmp_path / "agentd.db")
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        store = RedisStorage(server.url, key_prefix=f"agentd-test-dedupe:{uuid.uuid4().hex[:12]}:")
    try:
        yield store
    finally:
        if isinstance(store, RedisStorage):
            keys = [k async for k in store.client.scan_iter(match=store.key_prefix + "*")]
            if keys:
                await store.client.unlink(*keys)
        await store.close()


async def three_threads(storage: Storage) -> None:
    for i in range(3):
        at = T0 + timedelta(seconds=i)
        await storage.create_thread(Thread(f"t-{i}", "r-1", created_at=at, updated_at=at))


@pytest.mark.parametrize("limit", [0, -1, -5])
async def test_a_limit_below_one_is_an_empty_last_page(storage: Storage, limit: int) -> None:
    await three_threads(storage)
    page = await storage.list_threads("r-1", limit=limit)
    assert (page.threads, page.next_cursor) == ([], None)


async def test_pages_and_cursors_walk_every_thread_once(storage: Storage) -> None:
    await three_threads(storage)
    first = await storage.list_threads("r-1", limit=2)
    assert [t.id for t in first.threads] == ["t-2", "t-1"] and first.next_cursor is not None
    last = await storage.list_threads("r-1", limit=2, cursor=first.next_cursor)
    assert [t.id for t in last.threads] == ["t-0"] and last.next_cursor is None
    exact = await storage.list_threads("r-1", limit=3)
    assert [t.id for t in exact.threads] == ["t-2", "t-1", "t-0"] and exact.next_cursor is None
