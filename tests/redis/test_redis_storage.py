"""RedisStorage beyond the storage suite (tests/redis/test_storage.py runs
every storage behaviour against it): two clients sharing threads and messages,
the key layout a deleted thread leaves, a server that stops and comes back,
and a client given instead of a URL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from agentd.backends.redis_storage import RedisStorage
from agentd.runtime.storage import MessageQuery, StorageError, ThreadExists
from redis_server import RedisServer
from support.storage import T0, drop_redis_keys, ids, redis_keys, reminder, text, thread, unique_prefix


@pytest.fixture
async def redis_pair(redis_server: RedisServer) -> AsyncIterator[tuple[RedisStorage, RedisStorage]]:
    prefix = unique_prefix()
    first = RedisStorage(redis_server.url, key_prefix=prefix)
    second = RedisStorage(redis_server.url, key_prefix=prefix)
    try:
        yield first, second
    finally:
        try:
            await drop_redis_keys(first)
        finally:
            await first.close()
            await second.close()


async def test_redis_two_instances_share_threads_and_messages(redis_pair: tuple[RedisStorage, RedisStorage]) -> None:
    first, second = redis_pair
    await first.create_thread(thread(title="shared", created_at=T0))
    with pytest.raises(ThreadExists):
        await second.create_thread(thread())
    got = await second.get_thread("t-1")
    assert got is not None and got.title == "shared"
    await asyncio.gather(
        *((first if i % 2 else second).save_messages([text("t-1", f"m{i:02d}", str(i), at=T0)]) for i in range(40))
    )
    listed = (await first.list_messages(MessageQuery("t-1", limit=None))).messages
    assert sorted(ids(listed)) == [f"m{i:02d}" for i in range(40)]
    assert ids((await second.list_messages(MessageQuery("t-1", limit=None))).messages) == ids(listed)
    await second.update_thread("t-1", metadata={"by": "second"})
    assert [t.metadata for t in (await first.list_threads("r-1")).threads] == [{"by": "second"}]
    assert await first.delete_thread("t-1") is True
    assert await second.get_thread("t-1") is None
    assert await second.delete_thread("t-1") is False


async def test_redis_delete_thread_leaves_no_keys_behind(redis_server: RedisServer) -> None:
    store = RedisStorage(redis_server.url, key_prefix=unique_prefix())
    try:
        await store.create_thread(thread("a"))
        await store.create_thread(thread("b", "r-2"))
        await store.save_messages([text("a", "a1", "x"), reminder("a", "a2"), text("b", "b1", "y")])
        p = store.key_prefix
        assert await redis_keys(store) == sorted(
            [
                f"{p}message:a1",
                f"{p}message:a2",
                f"{p}message:b1",
                f"{p}resource-threads:r-1",
                f"{p}resource-threads:r-2",
                f"{p}sequence",
                f"{p}thread-bodies:a",
                f"{p}thread-bodies:b",
                f"{p}thread-messages:a",
                f"{p}thread-messages:b",
                f"{p}thread-visible:a",
                f"{p}thread-visible:b",
                f"{p}thread:a",
                f"{p}thread:b",
            ]
        )
        # Members sort as (created_at, sequence): score 0, zero-padded lexicographic keys.
        members = [m.decode() for m in await store.client.zrange(f"{p}thread-messages:a", 0, -1)]
        assert [m.rsplit(":", 1)[1] for m in members] == ["a1", "a2"]
        assert all(len(m.split(":")[0]) == 20 and len(m.split(":")[1]) == 20 for m in members)
        assert [m.decode().rsplit(":", 1)[1] for m in await store.client.zrange(f"{p}thread-visible:a", 0, -1)] == [
            "a1"
        ]
        await store.delete_thread("a")
        await store.delete_messages(["b1"])
        await store.delete_thread("b")
        assert await redis_keys(store) == [f"{p}sequence"]
    finally:
        await drop_redis_keys(store)
        await store.close()


async def test_redis_delete_thread_racing_writers_leaves_nothing_behind(redis_server: RedisServer) -> None:
    store = RedisStorage(redis_server.url, key_prefix=unique_prefix())
    try:
        for round_ in range(5):
            await store.create_thread(thread())

            async def save(i: int, round_: int = round_) -> None:
                await asyncio.sleep(0.0005 * (i % 7))
                await store.save_messages([text("t-1", f"m{round_}-{i}", str(i)), reminder("t-1", f"r{round_}-{i}")])

            async def delete() -> bool:
                await asyncio.sleep(0.001)
                return await store.delete_thread("t-1")

            results = await asyncio.gather(*(save(i) for i in range(30)), delete(), return_exceptions=True)
            assert results[-1] is True
            assert all(r is None or isinstance(r, StorageError) for r in results[:-1]), results
            assert await store.get_thread("t-1") is None
            # Writes that landed before the delete went with it; later ones were refused.
            assert set(await redis_keys(store)) <= {f"{store.key_prefix}sequence"}
    finally:
        await drop_redis_keys(store)
        await store.close()


@pytest.mark.timeout(60)  # far below the socket timeouts: a call that waited one out would not finish
async def test_redis_stopped_raises_storage_error_then_recovers(redis_server: RedisServer) -> None:
    # Refused at once: the timeouts are longer than the test may run.
    store = RedisStorage(redis_server.url, key_prefix=unique_prefix(), socket_timeout=600, socket_connect_timeout=600)
    try:
        await store.create_thread(thread())
        await store.save_messages([text("t-1", "m1", "x")])
        redis_server.stop()
        try:
            calls: list[Callable[[], Awaitable[Any]]] = [
                lambda: store.get_thread("t-1"),
                lambda: store.create_thread(thread("t-2")),
                lambda: store.save_thread(thread("t-2")),
                lambda: store.update_thread("t-1", title="x"),
                lambda: store.delete_thread("t-1"),
                lambda: store.list_threads("r-1"),
                lambda: store.save_messages([text("t-1", "m2", "y")]),
                lambda: store.list_messages(MessageQuery("t-1")),
                lambda: store.get_messages(["m1"]),
                lambda: store.delete_messages(["m1"]),
                lambda: store.last_messages("t-1", 3),
                store.ping,
            ]
            for call in calls:
                with pytest.raises(StorageError, match="redis storage"):
                    await call()
        finally:
            redis_server.start()  # same port, empty (the test server keeps nothing)
        assert await store.ping() is True
        assert await store.get_thread("t-1") is None
        await store.create_thread(thread())
        await store.save_messages([text("t-1", "m1", "back")])
        assert [m.text for m in (await store.list_messages(MessageQuery("t-1"))).messages] == ["back"]
    finally:
        await drop_redis_keys(store)
        await store.close()


async def test_redis_needs_exactly_one_of_url_and_client(redis_server: RedisServer) -> None:
    with pytest.raises(ValueError):
        RedisStorage()
    store = RedisStorage(redis_server.url, key_prefix=unique_prefix())
    try:
        with pytest.raises(ValueError):
            RedisStorage(redis_server.url, client=store.client)
        shared = RedisStorage(client=store.client, key_prefix=store.key_prefix)
        await shared.create_thread(thread())
        await shared.close()  # a passed client is not closed
        assert await store.get_thread("t-1") is not None
    finally:
        await drop_redis_keys(store)
        await store.close()
