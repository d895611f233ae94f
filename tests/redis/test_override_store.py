"""The editor override stores against one suite: in memory, SQLite (its own
migration, beside the threads in one file) and Redis (shared by replicas,
with invalidations over pub/sub), the last two on real servers."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.backends.redis_overrides import RedisOverrideStore
from agentd.backends.sqlite_overrides import SQLiteOverrideStore
from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.overrides import MAX_VERSIONS, InMemoryOverrideStore, OverrideStore, OverrideValues
from agentd.runtime.storage import StorageError
from redis_server import RedisServer
from support.polling import until


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def overrides(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[OverrideStore]:
    store: OverrideStore
    if request.param == "memory":
        store = InMemoryOverrideStore()
    elif request.param == "sqlite":
        store = SQLiteOverrideStore(tmp_path / "agentd.db")
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        store = RedisOverrideStore(server.url, key_prefix=f"ov-{uuid.uuid4().hex[:8]}:")
    await store.open()
    try:
        yield store
    finally:
        if isinstance(store, RedisOverrideStore):
            await store.clear()
        await store.close()


def setting(text: str):  # type: ignore[no-untyped-def]
    return lambda current: OverrideValues(instructions=text)


async def test_versions_are_numbered_kept_and_listed_newest_first(overrides: OverrideStore) -> None:
    assert await overrides.head("a") is None and await overrides.versions("a", None, 10) == []
    for n in range(1, 4):
        made = await overrides.append("a", setting(f"v{n}"), "alice")
        assert (made.version, made.values.instructions, made.updated_by) == (n, f"v{n}", "alice")
    head = await overrides.head("a")
    assert head is not None and head.version == 3
    assert [v.version for v in await overrides.versions("a", None, 2)] == [3, 2]
    assert [v.version for v in await overrides.versions("a", 2, 10)] == [1]
    assert (await overrides.version("a", 2)).values.instructions == "v2"  # type: ignore[union-attr]
    assert await overrides.version("a", 9) is None and await overrides.head("b") is None
    # Every field round-trips (tuples, maps, times).
    values = OverrideValues("i", ("x", "y"), {"x": "the x"})
    made = await overrides.append("a", lambda current: values, "bob")
    again = await overrides.head("a")
    assert again == made and again.values == values


async def test_a_step_that_raises_writes_nothing(overrides: OverrideStore) -> None:
    await overrides.append("a", setting("v1"), "alice")

    def refuse(current: object) -> OverrideValues:
        raise InvalidArgument.field("overrides.instructions", "no")

    with pytest.raises(InvalidArgument):
        await overrides.append("a", refuse, "alice")
    assert (await overrides.head("a")).version == 1  # type: ignore[union-attr]


async def test_history_is_pruned_to_the_bound(overrides: OverrideStore) -> None:
    for n in range(MAX_VERSIONS + 3):
        await overrides.append("a", setting(f"v{n + 1}"), "alice")
    listed = await overrides.versions("a", None, 1000)
    assert [v.version for v in listed] == list(range(MAX_VERSIONS + 3, 3, -1))
    assert await overrides.version("a", 3) is None


async def test_concurrent_writers_lose_no_version(overrides: OverrideStore) -> None:
    """Each step sees the version before it: read-modify-write is atomic."""

    def bump(current):  # type: ignore[no-untyped-def]
        return OverrideValues(instructions=str(int(current.values.instructions) + 1 if current else 1))

    await asyncio.gather(*(overrides.append("a", bump, "w") for _ in range(20)))
    head = await overrides.head("a")
    assert head is not None and (head.version, head.values.instructions) == (20, "20")


async def test_sqlite_has_its_own_migration_beside_the_threads(tmp_path: Path) -> None:
    path = tmp_path / "agentd.db"
    storage, store = SQLiteStorage(path), SQLiteOverrideStore(path)
    try:
        await storage.open()
        await store.open()
        await store.append("a", setting("v1"), "alice")
        assert store.schema_version == 1
    finally:
        await store.close()
        await storage.close()
    connection = sqlite3.connect(path)
    try:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"agent_overrides", "overrides_schema_version"} <= tables
        connection.execute("UPDATE agent_overrides SET body = 'garbage'")
        connection.commit()
    finally:
        connection.close()
    reopened = SQLiteOverrideStore(path)
    try:
        with pytest.raises(StorageError):  # a row it cannot read is a storage error, never a wrong value
            await reopened.head("a")
    finally:
        await reopened.close()


async def test_redis_tells_other_processes_of_each_write(redis_server: RedisServer) -> None:
    prefix = f"ov-{uuid.uuid4().hex[:8]}:"
    writer, reader = (RedisOverrideStore(redis_server.url, key_prefix=prefix) for _ in range(2))
    heard: asyncio.Queue[str | None] = asyncio.Queue()
    mine: list[str | None] = []
    await reader.watch(heard.put_nowait)
    await writer.watch(mine.append)
    try:
        await writer.append("acme\x1fa", setting("v1"), "alice")
        assert await asyncio.wait_for(heard.get(), 10) == "acme\x1fa"
        await reader.append("b", setting("v1"), "bob")
        await writer.append("c", setting("v1"), "alice")
        assert await asyncio.wait_for(heard.get(), 10) == "c"  # not its own write to "b"
        # The writer hears the other's write (polled: its listener runs at its pace).
        await until(lambda: mine, what="the writer to hear the other's write")
        assert mine == ["b"]
        assert (await reader.head("acme\x1fa")).values.instructions == "v1"  # type: ignore[union-attr]
    finally:
        await writer.clear()
        await writer.close()
        await reader.close()


async def test_a_broken_invalidation_channel_forgets_everything_once_back(redis_server: RedisServer) -> None:
    """Messages published while the channel was down are lost: the listener
    says "anything may have changed" (None) once it has resubscribed."""
    prefix = f"ov-{uuid.uuid4().hex[:8]}:"
    writer, reader = (RedisOverrideStore(redis_server.url, key_prefix=prefix) for _ in range(2))
    heard: asyncio.Queue[str | None] = asyncio.Queue()
    await reader.watch(heard.put_nowait)
    try:
        await writer.client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
        assert await asyncio.wait_for(heard.get(), 10) is None
        await writer.append("a", setting("v1"), "alice")  # and it hears writes again
        assert await asyncio.wait_for(heard.get(), 10) == "a"
    finally:
        await writer.clear()
        await writer.close()
        await reader.close()
