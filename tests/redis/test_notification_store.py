"""The notification store, one suite run against every backend (in memory,
SQLite, a real redis-server): records, coalescing, lists, due times and
status changes. What only one backend can show is in
tests/sqlite/test_sqlite_notifications.py and
tests/redis/test_redis_notifications.py; send, the dispatcher and the inbox
tool over these stores are tests/redis/test_notifications.py."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from agentd.backends.redis_notifications import RedisNotificationStore
from agentd.backends.sqlite_notifications import SQLiteNotificationStore
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.notifications import (
    InMemoryNotificationStore,
    NotificationExists,
    NotificationInput,
    NotificationNotFound,
    NotificationPatch,
    NotificationQuery,
    NotificationRecord,
    NotificationStore,
    Status,
)
from redis_server import RedisServer
from support.notifications import AGENT, MINUTE, RESOURCE, T0, THREAD, create, note, schedule


async def test_create_fills_defaults(store: NotificationStore) -> None:
    record = await create(store, note(payload={"run": 42}, metadata={"url": "https://ci"}))
    assert (record.priority, record.status, record.coalesced_count, record.delivery_attempts) == (
        "medium",
        "pending",
        1,
        0,
    )
    assert record.created_at == record.updated_at == T0 and record.created_at.tzinfo is not None
    assert (record.thread_id, record.resource_id, record.agent_id) == (THREAD, RESOURCE, AGENT)
    assert record.payload == {"run": 42} and record.metadata == {"url": "https://ci"}
    assert record.deliver_at is None and record.summary_at is None and record.delivered_at is None
    assert await store.get(THREAD, record.id) == record


async def test_records_are_copied_at_the_boundary(store: NotificationStore) -> None:
    value = note(payload={"tests": ["a"]}, metadata={"m": {"n": 1}}, attributes={"pr": "7"})
    record = await create(store, value)
    value.payload["tests"].append("b")
    assert value.metadata is not None
    value.metadata["m"]["n"] = 2
    record.payload["tests"].append("c")
    assert record.metadata is not None
    record.metadata["x"] = 1
    record.summary = "changed"
    stored = await store.get(THREAD, record.id)
    assert stored is not None
    assert stored.payload == {"tests": ["a"]} and stored.metadata == {"m": {"n": 1}}
    assert stored.summary == "CI failed on main" and stored.attributes == (("pr", "7"),)
    page = await store.list_notifications(NotificationQuery(THREAD))
    page.records[0].payload["tests"].clear()
    again = await store.get(THREAD, record.id)
    assert again is not None and again.payload == {"tests": ["a"]}


async def test_same_id_in_two_threads_is_two_records(store: NotificationStore) -> None:
    one = await create(store, note("one"), id="n-1", thread_id="t-1")
    two = await create(store, note("two"), id="n-1", thread_id="t-2")
    await store.update("t-1", "n-1", NotificationPatch(status="seen"), now=T0 + MINUTE)
    first, second = await store.get("t-1", "n-1"), await store.get("t-2", "n-1")
    assert first is not None and second is not None
    assert (first.summary, first.status) == ("one", "seen")
    assert (second.summary, second.status) == ("two", "pending")
    assert one.id == two.id
    with pytest.raises(NotificationExists):
        await create(store, note("three"), id="n-1", thread_id="t-1")


async def test_dedupe_key_coalesces_into_the_pending_record(store: NotificationStore) -> None:
    first = await create(
        store,
        note(
            "CI failed: 1 test", priority="high", dedupe_key="ci:main", attributes={"a": 1, "b": 2}, metadata={"x": 1}
        ),
    )
    second = await create(
        store,
        note("CI failed: 3 tests", dedupe_key="ci:main", attributes={"b": 3, "c": 4}, metadata={"y": 2}, payload=[1]),
        now=T0 + MINUTE,
    )
    assert second.id == first.id and second.coalesced_count == 2
    assert second.summary == "CI failed: 3 tests"
    assert second.priority == "high"  # not given: kept
    assert second.payload == [1]
    assert second.attributes == (("a", 1), ("b", 3), ("c", 4))
    assert second.metadata == {"x": 1, "y": 2}
    assert second.created_at == T0 and second.updated_at == T0 + MINUTE and second.status == "pending"
    third = await create(store, note("CI green", priority="low", dedupe_key="ci:main"), now=T0 + 2 * MINUTE)
    assert (third.id, third.coalesced_count, third.priority, third.payload) == (first.id, 3, "low", [1])
    page = await store.list_notifications(NotificationQuery(THREAD))
    assert [r.id for r in page.records] == [first.id]


async def test_coalesce_key_merges_related_notifications(store: NotificationStore) -> None:
    first = await create(store, note("PR #1 review", kind="review", coalesce_key="pr:1", dedupe_key="a"))
    second = await create(store, note("PR #1 second review", kind="review", coalesce_key="pr:1", dedupe_key="b"))
    assert second.id == first.id and second.coalesced_count == 2


async def test_what_never_coalesces(store: NotificationStore) -> None:
    base = await create(store, note(dedupe_key="k"))
    other_kind = await create(store, note(kind="deploy", dedupe_key="k"))
    other_source = await create(store, note(source="gitlab", dedupe_key="k"))
    other_agent = await create(store, note(dedupe_key="k"), agent_id="other-agent")
    other_resource = await create(store, note(dedupe_key="k"), resource_id="user-999")
    other_thread = await create(store, note(dedupe_key="k"), thread_id="thread-2")
    no_key = await create(store, note())
    no_key_again = await create(store, note())
    ids = {base.id, other_kind.id, other_source.id, other_agent.id, other_resource.id, other_thread.id, no_key.id}
    assert len(ids | {no_key_again.id}) == 8
    # A record no longer pending is never coalesced into.
    for status in ("delivered", "seen"):
        await store.update(THREAD, base.id, NotificationPatch(status=status), now=T0)
        fresh = await create(store, note(dedupe_key="k"))
        assert fresh.id != base.id and fresh.coalesced_count == 1
        await store.update(THREAD, fresh.id, NotificationPatch(status="archived"), now=T0)


async def test_list_filters_and_orders_newest_update_first(store: NotificationStore) -> None:
    a = await create(store, note("Build broke", priority="high"), now=T0)
    b = await create(
        store, note("Alice mentioned you", source="slack", kind="mention", priority="low"), now=T0 + MINUTE
    )
    c = await create(store, note("Invoice due", source="email", kind="billing"), now=T0 + 2 * MINUTE)
    await create(store, note("other thread"), thread_id="elsewhere")
    await store.update(THREAD, a.id, NotificationPatch(status="seen"), now=T0 + 3 * MINUTE)

    async def ids(**kw: Any) -> list[str]:
        return [r.id for r in (await store.list_notifications(NotificationQuery(THREAD, **kw))).records]

    assert await ids() == [a.id, c.id, b.id]
    assert await ids(status="pending") == [c.id, b.id]
    assert await ids(status=["seen", "delivered"]) == [a.id]
    assert await ids(status=[]) == [a.id, c.id, b.id]
    assert await ids(priority="low") == [b.id]
    assert await ids(priority=["high", "medium"]) == [a.id, c.id]
    assert await ids(source="slack") == [b.id]
    assert await ids(search="BROKE") == [a.id]  # summary
    assert await ids(search="Mention") == [b.id]  # kind
    assert await ids(search="mai") == [c.id]  # source
    assert await ids(search="nothing like it") == []
    assert await ids(agent_id=AGENT, resource_id=RESOURCE) == [a.id, c.id, b.id]
    assert await ids(agent_id="nobody") == []
    assert await ids(limit=2) == [a.id, c.id]
    assert await ids(limit=2, offset=1) == [c.id, b.id]
    with pytest.raises(InvalidArgument):
        await ids(status="unread")


async def test_cursor_pages_walk_every_record_once(store: NotificationStore) -> None:
    made = [await create(store, note(f"n{i}"), now=T0 + (i // 2) * MINUTE) for i in range(7)]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = await store.list_notifications(NotificationQuery(THREAD, limit=3, cursor=cursor))
        seen += [r.id for r in page.records]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert pages == 3
    # Newest update first; records updated at the same instant, newest inserted first.
    assert seen == [r.id for r in reversed(made)]
    with pytest.raises(InvalidArgument):
        await store.list_notifications(NotificationQuery(THREAD, cursor="garbage"))


async def test_list_due_ignores_future_and_settled_records_and_orders_by_due_time(
    store: NotificationStore,
) -> None:
    late = await schedule(store, await create(store, note("late")), deliver_at=T0 + 5 * MINUTE)
    early = await schedule(
        store, await create(store, note("early")), deliver_at=T0 + 9 * MINUTE, summary_at=T0 + MINUTE
    )
    future = await schedule(store, await create(store, note("future")), summary_at=T0 + 60 * MINUTE)
    seen = await schedule(store, await create(store, note("seen")), deliver_at=T0, status="seen")
    await create(store, note("unscheduled"))
    failed = await schedule(store, await create(store, note("failed")), deliver_at=T0, status="failed")
    now = T0 + 10 * MINUTE
    due = await store.list_due(now)
    assert [r.id for r in due] == [early.id, late.id]
    assert future.id not in {r.id for r in due} and seen.id != failed.id
    assert [r.id for r in await store.list_due(now, limit=1)] == [early.id]
    assert await store.list_due(now, agent_id="someone-else") == []
    assert [r.id for r in await store.list_due(now, resource_id=RESOURCE)] == [early.id, late.id]
    # Same due time: the older update first.
    tie = await create(store, note("tie"), now=T0 - MINUTE)
    tie = await store.update(THREAD, tie.id, NotificationPatch(deliver_at=T0 + MINUTE), now=T0 - MINUTE)
    assert [r.id for r in await store.list_due(now)] == [tie.id, early.id, late.id]


async def test_update_stamps_status_times_and_clears_schedule(store: NotificationStore) -> None:
    record = await schedule(
        store, await create(store), deliver_at=T0 + MINUTE, summary_at=T0 + MINUTE, delivery_reason="r"
    )
    seen = await store.update(THREAD, record.id, NotificationPatch(status="seen"), now=T0 + 2 * MINUTE)
    assert seen.status == "seen" and seen.seen_at == T0 + 2 * MINUTE and seen.updated_at == T0 + 2 * MINUTE
    assert seen.deliver_at == T0 + MINUTE and seen.delivery_reason == "r"  # UNSET fields stay
    again = await store.update(THREAD, record.id, NotificationPatch(status="seen"), now=T0 + 3 * MINUTE)
    assert again.seen_at == T0 + 2 * MINUTE  # not a change: the first time stays
    cleared = await store.update(
        THREAD, record.id, NotificationPatch(deliver_at=None, summary_at=None), now=T0 + 4 * MINUTE
    )
    assert cleared.deliver_at is None and cleared.summary_at is None
    stamps: list[tuple[Status, str]] = [
        ("dismissed", "dismissed_at"),
        ("archived", "archived_at"),
        ("discarded", "discarded_at"),
    ]
    for status, stamp in stamps:
        changed = await store.update(THREAD, record.id, NotificationPatch(status=status), now=T0 + 5 * MINUTE)
        assert getattr(changed, stamp) == T0 + 5 * MINUTE
    assert await store.get(THREAD, record.id) == changed
    with pytest.raises(NotificationNotFound) as caught:
        await store.update(THREAD, "missing", NotificationPatch(status="seen"), now=T0)
    assert caught.value.reason == "NOTIFICATION_NOT_FOUND" and caught.value.status == "NOT_FOUND"
    with pytest.raises(InvalidArgument):
        await store.update(THREAD, record.id, NotificationPatch(status="bogus"), now=T0)  # type: ignore[arg-type]


async def test_update_status_dedupes_and_skips_missing(store: NotificationStore) -> None:
    a, b = await create(store, note("a")), await create(store, note("b"))
    done = await store.update_status(THREAD, [a.id, "missing", b.id, a.id], "seen", now=T0 + MINUTE)
    assert [r.id for r in done] == [a.id, b.id]
    assert all(r.status == "seen" and r.seen_at == T0 + MINUTE for r in done)
    assert await store.update_status(THREAD, [], "seen", now=T0) == []


async def test_mark_delivered_only_moves_pending_records(store: NotificationStore) -> None:
    pending = await create(store, note("a"))
    marked = await store.mark_delivered(THREAD, pending.id, delivered_signal_id="sig-1", attempted_at=T0 + MINUTE)
    assert marked is not None
    assert (marked.status, marked.delivered_at, marked.delivered_signal_id) == ("delivered", T0 + MINUTE, "sig-1")
    assert marked.last_delivery_attempt_at == T0 + MINUTE
    seen = await schedule(store, await create(store, note("b")), status="seen")
    kept = await store.mark_delivered(THREAD, seen.id, delivered_signal_id="sig-2", attempted_at=T0 + MINUTE)
    assert kept is not None
    assert (kept.status, kept.delivered_at, kept.delivered_signal_id) == ("seen", None, "sig-2")
    assert await store.mark_delivered(THREAD, "missing", delivered_signal_id="x", attempted_at=T0) is None


async def test_clear_removes_everything(store: NotificationStore) -> None:
    record = await create(store)
    await store.clear()
    assert await store.get(THREAD, record.id) is None


async def test_create_validates_input(store: NotificationStore) -> None:
    with pytest.raises(InvalidArgument) as caught:
        await create(store, NotificationInput(source="", kind=" ", summary="", priority="huge"))  # type: ignore[arg-type]
    fields = {v.field for v in caught.value.violations}
    assert fields == {"notification.source", "notification.kind", "notification.summary", "notification.priority"}
    with pytest.raises(InvalidArgument):
        await create(store, note(attributes={"bad name": 1}))
    assert (await store.list_notifications(NotificationQuery(THREAD))).records == []


async def coalescing_script(store: NotificationStore) -> list[NotificationRecord | str]:
    """Creates that coalesce, or not, in every way `create` distinguishes; each
    step's answer (the stored record, or the error's reason), then the listing."""
    out: list[NotificationRecord | str] = []

    async def step(value: NotificationInput, at: int, **kw: Any) -> None:
        try:
            out.append(await create(store, value, now=T0 + at * MINUTE, **kw))
        except NotificationExists as exc:
            out.append(exc.reason)

    await step(note("a", dedupe_key="d1", coalesce_key="c1", attributes={"x": 1}), 0, id="n-1")
    await step(note("b", dedupe_key="d2", coalesce_key="c2", priority="high"), 1, id="n-2")
    # Dedupe key d1: into n-1 (its given id is ignored).
    await step(note("a again", dedupe_key="d1", payload={"p": 1}, attributes={"y": 2}), 2, id="n-3")
    # Matches n-1 by dedupe key and n-2 by coalesce key: the newest update (n-1) takes it.
    await step(note("both", dedupe_key="d1", coalesce_key="c2", metadata={"m": 1}), 3, id="n-4")
    # n-2 updated later than n-1: now n-2 is the newest of the two.
    await store.update(THREAD, "n-2", NotificationPatch(summary="b edited"), now=T0 + 4 * MINUTE)
    await step(note("both again", dedupe_key="d1", coalesce_key="c2", priority="low"), 5, id="n-5")
    # Same updated_at on both: the later inserted (n-2) wins the tie.
    await store.update(THREAD, "n-1", NotificationPatch(summary="a edited"), now=T0 + 5 * MINUTE)
    await step(note("tie", dedupe_key="d1", coalesce_key="c2"), 5, id="n-6")
    # Another scope (agent, resource, kind, source) never coalesces; a taken id is refused.
    await step(note("other agent", dedupe_key="d1"), 6, id="n-7", agent_id="other")
    await step(note("no agent", dedupe_key="d1"), 6, id="n-8", agent_id=None, resource_id=None)
    await step(note("no agent again", dedupe_key="d1"), 7, id="n-9", agent_id=None, resource_id=None)
    await step(note("other kind", kind="deploy", dedupe_key="d1"), 7, id="n-1")
    # A record no longer pending takes nothing.
    await store.update(THREAD, "n-1", NotificationPatch(status="seen"), now=T0 + 8 * MINUTE)
    await store.update(THREAD, "n-2", NotificationPatch(status="dismissed"), now=T0 + 8 * MINUTE)
    await step(note("after seen", dedupe_key="d1", coalesce_key="c2"), 9, id="n-10")
    await step(note("no key"), 10, id="n-10")
    out.extend((await store.list_notifications(NotificationQuery(THREAD))).records)
    return out


async def test_create_coalesces_identically_in_every_store(redis_server: RedisServer, tmp_path: Path) -> None:
    memory = InMemoryNotificationStore()
    sqlite = SQLiteNotificationStore(tmp_path / "notifications.db")
    redis = RedisNotificationStore(redis_server.url, key_prefix=f"agentd-test-notifications:{uuid.uuid4().hex[:12]}:")
    try:
        # One create(), written once in NotificationStore, over each backend's insert_or_coalesce.
        assert all(type(s).create is NotificationStore.create for s in (memory, sqlite, redis))
        expected = await coalescing_script(memory)
        assert await coalescing_script(sqlite) == expected
        assert await coalescing_script(redis) == expected
    finally:
        await redis.clear()
        await redis.close()
        await sqlite.close()
    records = [r for r in expected if isinstance(r, NotificationRecord)]
    steps = [r if isinstance(r, str) else (r.id, r.coalesced_count, r.summary) for r in expected[:12]]
    assert steps == [
        ("n-1", 1, "a"),
        ("n-2", 1, "b"),
        ("n-1", 2, "a again"),
        ("n-1", 3, "both"),
        ("n-2", 2, "both again"),
        ("n-2", 3, "tie"),
        ("n-7", 1, "other agent"),
        ("n-8", 1, "no agent"),
        ("n-8", 2, "no agent again"),
        "NOTIFICATION_ALREADY_EXISTS",
        ("n-10", 1, "after seen"),
        "NOTIFICATION_ALREADY_EXISTS",
    ]
    merged = records[3]
    assert (merged.attributes, merged.payload, merged.metadata) == ((("x", 1), ("y", 2)), {"p": 1}, {"m": 1})
    assert (records[4].priority, records[4].created_at, records[4].updated_at) == ("low", T0 + MINUTE, T0 + 5 * MINUTE)
    # n-1 and n-2 last changed together: the later inserted first.
    assert [r.id for r in expected[12:]] == ["n-10", "n-2", "n-1", "n-8", "n-7"]
