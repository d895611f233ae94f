"""RedisNotificationStore beyond the shared store suite (tests/redis/test_notification_store.py
runs every store behaviour against it): replicas sharing one Redis, concurrent
creates, what survives a new client, the key layout, and a server that is down.
Always on a real redis-server (the session's `redis_server` fixture)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta, timezone

import pytest

from agentd.backends.redis_notifications import RedisNotificationStore
from agentd.backends.redis_storage import RedisStorage
from agentd.runtime.notifications import NotificationPatch, NotificationQuery
from agentd.runtime.storage import StorageError, Thread
from redis_server import RedisServer, free_port
from support.notifications import AGENT, MINUTE, RESOURCE, T0, THREAD, note

Replica = Callable[[], RedisNotificationStore]


async def keys(store: RedisNotificationStore) -> list[str]:
    return sorted([k.decode() async for k in store.client.scan_iter(match=store.key_prefix + "*")])


@pytest.fixture
async def replica(redis_server: RedisServer) -> AsyncIterator[Replica]:
    """Makes stores on one server and one key prefix: agentd replicas."""
    prefix = f"agentd-test-notifications:{uuid.uuid4().hex[:12]}:"
    made: list[RedisNotificationStore] = []

    def make() -> RedisNotificationStore:
        made.append(RedisNotificationStore(redis_server.url, key_prefix=prefix))
        return made[-1]

    yield make
    try:
        if made:
            await made[0].clear()
    finally:
        for store in made:
            await store.close()


async def test_replicas_share_one_inbox(replica: Replica) -> None:
    one, two = replica(), replica()
    record = await one.create(note(), thread_id=THREAD, resource_id=RESOURCE, agent_id=AGENT, now=T0)
    assert await two.get(THREAD, record.id) == record
    seen = await two.update(THREAD, record.id, NotificationPatch(status="seen"), now=T0 + MINUTE)
    assert await one.get(THREAD, record.id) == seen and seen.seen_at == T0 + MINUTE
    later = await two.create(note("later"), thread_id=THREAD, now=T0 + 2 * MINUTE)
    page = await one.list_notifications(NotificationQuery(THREAD))
    assert [r.id for r in page.records] == [later.id, record.id]


async def test_concurrent_creates_with_one_dedupe_key_make_one_record(replica: Replica) -> None:
    one, two = replica(), replica()
    rounds = 10
    made = await asyncio.gather(
        *(
            store.create(
                note(f"attempt {i}", dedupe_key="ci:main"),
                thread_id=THREAD,
                resource_id=RESOURCE,
                agent_id=AGENT,
                now=T0 + i * timedelta(seconds=1),
            )
            for i in range(rounds)
            for store in (one, two)
        )
    )
    assert len({r.id for r in made}) == 1
    page = await one.list_notifications(NotificationQuery(THREAD))
    assert len(page.records) == 1
    assert page.records[0].coalesced_count == 2 * rounds
    assert sorted(r.coalesced_count for r in made) == list(range(1, 2 * rounds + 1))


async def test_concurrent_creates_with_one_id_make_one_record(replica: Replica) -> None:
    one, two = replica(), replica()
    results = await asyncio.gather(
        one.create(note("one"), thread_id=THREAD, id="n-1", now=T0),
        two.create(note("two"), thread_id=THREAD, id="n-1", now=T0),
        return_exceptions=True,
    )
    errors = [r for r in results if isinstance(r, Exception)]
    assert len(errors) == 1 and getattr(errors[0], "reason", None) == "NOTIFICATION_ALREADY_EXISTS"
    assert len((await one.list_notifications(NotificationQuery(THREAD))).records) == 1


async def test_concurrent_status_changes_lose_no_update(replica: Replica) -> None:
    one, two = replica(), replica()
    record = await one.create(note(), thread_id=THREAD, now=T0)
    await asyncio.gather(
        *(
            store.mark_delivered(THREAD, record.id, delivered_signal_id=f"sig-{i}", attempted_at=T0 + MINUTE)
            if i % 2
            else store.update(THREAD, record.id, NotificationPatch(delivery_reason=f"r-{i}"), now=T0 + MINUTE)
            for i in range(20)
            for store in (one, two)
        )
    )
    stored = await two.get(THREAD, record.id)
    assert stored is not None and stored.status == "delivered" and stored.delivered_at == T0 + MINUTE


async def test_records_survive_a_new_client_exactly(replica: Replica) -> None:
    first = replica()
    record = await first.create(
        note(
            priority="urgent",
            payload={"nested": [1, 2.5, None, True]},
            attributes=[("z", 1), ("a", {"k": [1]})],
            metadata={"m": "x"},
            dedupe_key="d",
        ),
        thread_id=THREAD,
        resource_id=RESOURCE,
        agent_id=AGENT,
        now=datetime(2024, 1, 1, 9, tzinfo=timezone(timedelta(hours=2))),
    )
    record = await first.update(THREAD, record.id, NotificationPatch(deliver_at=T0), now=T0)
    await first.close()
    second = replica()
    reread = await second.get(THREAD, record.id)
    assert reread == record and reread is not None
    assert reread.created_at.utcoffset() == timedelta(hours=2)
    assert reread.attributes == (("z", 1), ("a", {"k": [1]}))
    merged = await second.create(note("again", dedupe_key="d"), thread_id=THREAD, resource_id=RESOURCE, agent_id=AGENT)
    assert merged.id == record.id and merged.coalesced_count == 2
    assert [r.id for r in await second.list_due(T0)] == [record.id]


async def test_keys_are_namespaced_and_indexes_follow_the_records(replica: Replica, redis_server: RedisServer) -> None:
    store = replica()
    # Thread storage under the same prefix keeps its keys, and clear() leaves them alone.
    threads = RedisStorage(redis_server.url, key_prefix=store.key_prefix)
    try:
        await threads.create_thread(Thread(THREAD, RESOURCE))
        record = await store.create(note(dedupe_key="k"), thread_id=THREAD, resource_id=RESOURCE, agent_id=AGENT)
        await store.update(THREAD, record.id, NotificationPatch(deliver_at=T0), now=T0)
        found = await keys(store)
        mine = [k for k in found if k.startswith(store.key_prefix + "notifications:")]
        assert len(mine) == 5  # records, order, due, one twin set, sequence
        assert await store.client.zcard(store.key_prefix + "notifications:due") == 1
        # Settled: out of the due index and no longer a coalescing target.
        await store.update_status(THREAD, [record.id], "archived", now=T0 + MINUTE)
        assert await store.client.zcard(store.key_prefix + "notifications:due") == 0
        assert await store.list_due(T0 + MINUTE) == []
        fresh = await store.create(note(dedupe_key="k"), thread_id=THREAD, resource_id=RESOURCE, agent_id=AGENT)
        assert fresh.id != record.id
        await store.clear()
        left = await keys(store)
        assert left and not any(k.startswith(store.key_prefix + "notifications:") for k in left)
        assert await threads.get_thread(THREAD) is not None
    finally:
        await threads.delete_thread(THREAD)
        await threads.close()


async def test_pages_and_due_lists_larger_than_a_batch(replica: Replica) -> None:
    store = replica()
    made = [
        await store.create(note(f"n{i}", priority="low" if i % 3 else "high"), thread_id=THREAD, now=T0)
        for i in range(450)
    ]
    high = [r.id for r in reversed(made) if r.priority == "high"]
    seen: list[str] = []
    cursor = None
    while True:
        page = await store.list_notifications(NotificationQuery(THREAD, priority="high", limit=70, cursor=cursor))
        seen += [r.id for r in page.records]
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == high
    for record in made:
        await store.update(THREAD, record.id, NotificationPatch(summary_at=T0), now=T0)
    due = await store.list_due(T0, limit=1000, resource_id=None)
    assert [r.id for r in due] == [r.id for r in made]


async def test_an_unreachable_server_is_a_storage_error() -> None:
    store = RedisNotificationStore(f"redis://127.0.0.1:{free_port()}/0", socket_timeout=0.5)
    try:
        with pytest.raises(StorageError):
            await store.get(THREAD, "n-1")
        with pytest.raises(StorageError):
            await store.create(note(dedupe_key="k"), thread_id=THREAD)
        with pytest.raises(StorageError):
            await store.ping()
    finally:
        await store.close()


def test_needs_exactly_one_of_url_and_client() -> None:
    with pytest.raises(ValueError):
        RedisNotificationStore()


async def test_redis_storage_settings_put_the_inbox_on_redis(redis_server: RedisServer) -> None:
    from agentd import config

    prefix = f"agentd:test:{uuid.uuid4().hex[:8]}:"
    settings = config.StorageSettings(backend="redis", redis_url=redis_server.url, key_prefix=prefix)
    store = config.build_notification_store(settings)
    assert isinstance(store, RedisNotificationStore) and store.key_prefix == prefix
    await store.close()
