"""One storage suite run against every backend: in memory, SQLite on a temp
file and a real redis-server. What only one backend can show is in
tests/sqlite/test_sqlite_storage.py and tests/redis/test_redis_storage.py.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from agentd.runtime.messages import (
    DataPart,
    FilePart,
    Message,
    ReasoningPart,
    SignalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    utcnow,
)
from agentd.runtime.signals import create_signal, to_db_message
from agentd.runtime.storage import (
    BackgroundTask,
    MessageQuery,
    Storage,
    StorageError,
    Thread,
    ThreadExists,
    decode_message_cursor,
)
from support.samples import BLOB
from support.storage import T0, bump, ids, reminder, text, thread


def user_signal(thread_id: str, message_id: str, at: datetime = T0) -> Message:
    """A visible signal row: a user signal."""
    signal = create_signal("user", f"signal {message_id}", id=message_id, created_at=at)
    return to_db_message(signal, thread_id=thread_id, resource_id="r-1")


async def walk(storage: Storage, query: MessageQuery) -> list[Message]:
    """Every page of a query, checking each page's size and the cursors."""
    out: list[Message] = []
    cursor: str | None = None
    for _ in range(10_000):
        page = await storage.list_messages(MessageQuery(**{**query.__dict__, "cursor": cursor}))
        if query.limit is not None:
            assert len(page.messages) <= query.limit
        out += page.messages
        if page.next_cursor is None:
            return out
        assert page.messages, "a cursor after an empty page"
        decode_message_cursor(page.next_cursor)  # the shared cursor format
        cursor = page.next_cursor
    raise AssertionError("the walk did not end")


# ============================================================ threads


async def test_create_get_and_duplicate_thread(storage: Storage) -> None:
    created = await storage.create_thread(thread(title="hello", metadata={"kind": "a", "n": [1, 2]}, created_at=T0))
    assert created.id == "t-1" and created.title == "hello" and created.created_at == T0
    assert await storage.get_thread("t-1") == created
    with pytest.raises(ThreadExists):
        await storage.create_thread(thread(title="other"))
    got = await storage.get_thread("t-1")
    assert got is not None and got.title == "hello"
    assert await storage.get_thread("missing") is None


async def test_save_thread_creates_then_replaces_keeping_created_at(storage: Storage) -> None:
    first = await storage.save_thread(thread(title="v1", created_at=T0, updated_at=T0))
    assert first.created_at == T0 and first.title == "v1"
    later = T0 + timedelta(hours=1)
    second = await storage.save_thread(
        thread(title="v2", metadata={"x": 1}, created_at=later, updated_at=later + timedelta(seconds=1))
    )
    assert second.created_at == T0
    assert second.title == "v2" and second.metadata == {"x": 1}
    assert second.updated_at == later + timedelta(seconds=1)
    assert await storage.get_thread("t-1") == second
    # Still listed once, at its original place.
    page = await storage.list_threads("r-1")
    assert [t.id for t in page.threads] == ["t-1"] and page.threads[0].created_at == T0
    # Saved under another resource: listed there only.
    moved = await storage.save_thread(thread(resource_id="r-2", title="v3"))
    assert moved.created_at == T0 and moved.resource_id == "r-2"
    assert (await storage.list_threads("r-1")).threads == []
    assert [t.title for t in (await storage.list_threads("r-2")).threads] == ["v3"]


async def test_update_thread(storage: Storage) -> None:
    await storage.create_thread(thread(title="old", metadata={"a": 1}, created_at=T0, updated_at=T0))
    updated = await storage.update_thread("t-1", title="new")
    assert updated is not None
    assert updated.title == "new" and updated.metadata == {"a": 1}
    assert updated.created_at == T0 and updated.updated_at > T0
    again = await storage.update_thread("t-1", metadata={"b": [True, None]})
    assert again is not None
    assert again.title == "new" and again.metadata == {"b": [True, None]}
    assert again.updated_at >= updated.updated_at
    assert await storage.get_thread("t-1") == again
    assert await storage.update_thread("missing", title="x") is None
    assert await storage.get_thread("missing") is None


async def test_update_thread_metadata_is_one_atomic_step(storage: Storage) -> None:
    await storage.create_thread(thread(metadata={"keep": "me"}, created_at=T0, updated_at=T0))
    results = await asyncio.gather(*(storage.update_thread_metadata("t-1", bump) for _ in range(30)))
    assert sorted(r[1] for r in results if r is not None) == list(range(1, 31))
    stored = await storage.get_thread("t-1")
    assert stored is not None and stored.metadata == {"keep": "me", "count": 30}
    assert stored.created_at == T0 and stored.updated_at > T0


async def test_update_thread_metadata_answers(storage: Storage) -> None:
    await storage.create_thread(thread(metadata={"a": [1]}, created_at=T0, updated_at=T0))

    def look(metadata: dict[str, Any]) -> tuple[None, str]:
        metadata["a"].append(2)  # its own copy: nothing is stored
        return None, "looked"

    answer = await storage.update_thread_metadata("t-1", look)
    assert answer is not None
    unchanged, result = answer
    assert result == "looked" and unchanged.metadata == {"a": [1]} and unchanged.updated_at == T0
    assert await storage.get_thread("t-1") == unchanged

    def fail(metadata: dict[str, Any]) -> tuple[dict[str, Any], None]:
        raise LookupError("no")

    with pytest.raises(LookupError):
        await storage.update_thread_metadata("t-1", fail)
    assert await storage.get_thread("t-1") == unchanged
    written = await storage.update_thread_metadata("t-1", lambda m: ({"b": {"c": None}}, 7))
    assert written is not None and written[1] == 7
    assert written[0].metadata == {"b": {"c": None}} and written[0].updated_at > T0
    assert await storage.get_thread("t-1") == written[0]
    assert await storage.update_thread_metadata("missing", bump) is None
    assert await storage.get_thread("missing") is None


async def test_delete_thread_removes_its_messages(storage: Storage) -> None:
    await storage.create_thread(thread("a"))
    await storage.create_thread(thread("b"))
    await storage.save_messages([text("a", "a1", "x"), reminder("a", "a2"), text("b", "b1", "y")])
    assert await storage.delete_thread("a") is True
    assert await storage.get_thread("a") is None
    assert await storage.get_messages(["a1", "a2", "b1"]) == [text("b", "b1", "y")]
    assert (await storage.list_messages(MessageQuery("a", include_system_reminders=True))).messages == []
    assert [t.id for t in (await storage.list_threads("r-1")).threads] == ["b"]
    assert await storage.delete_thread("a") is False
    # A new thread with the old id starts empty.
    await storage.create_thread(thread("a"))
    assert (await storage.list_messages(MessageQuery("a", include_system_reminders=True))).messages == []
    assert ids((await storage.list_messages(MessageQuery("b"))).messages) == ["b1"]


async def test_list_threads_newest_first_paged_filtered_and_per_resource(storage: Storage) -> None:
    made: list[Thread] = []
    for i in range(23):
        # Pairs share a created_at: ties are ordered by id (descending too).
        at = T0 + timedelta(minutes=i // 2)
        meta: dict[str, Any] = {"kind": "a" if i % 3 == 0 else "b", "i": i}
        made.append(await storage.create_thread(thread(f"t-{i:02d}", "r-1", metadata=meta, created_at=at)))
    for i in range(3):
        await storage.create_thread(thread(f"other-{i}", "r-2", metadata={"kind": "a"}, created_at=T0))
    newest_first = sorted(made, key=lambda t: (t.created_at, t.id), reverse=True)

    async def all_pages(resource: str, limit: int, metadata: dict[str, Any] | None = None) -> list[Thread]:
        out: list[Thread] = []
        cursor = None
        while True:
            page = await storage.list_threads(resource, limit=limit, cursor=cursor, metadata=metadata)
            assert len(page.threads) <= limit
            out += page.threads
            if page.next_cursor is None:
                return out
            cursor = page.next_cursor

    assert await all_pages("r-1", 5) == newest_first
    assert await all_pages("r-1", 23) == newest_first
    assert await all_pages("r-1", 100) == newest_first
    first = await storage.list_threads("r-1", limit=5)
    assert [t.id for t in first.threads] == [t.id for t in newest_first[:5]] and first.next_cursor
    kind_a = [t for t in newest_first if t.metadata["kind"] == "a"]
    assert len(kind_a) == 8
    assert await all_pages("r-1", 3, {"kind": "a"}) == kind_a
    assert await all_pages("r-1", 2, {"kind": "a", "i": 9}) == [t for t in kind_a if t.metadata["i"] == 9]
    assert await all_pages("r-1", 2, {"kind": "c"}) == []
    assert [t.id for t in await all_pages("r-2", 2)] == ["other-2", "other-1", "other-0"]
    empty = await storage.list_threads("nobody")
    assert empty.threads == [] and empty.next_cursor is None


# ============================================================ messages


def every_part_messages(thread_id: str) -> list[Message]:
    assistant = Message(
        role="assistant",
        parts=[
            TextPart("héllo \u2603 \U0001f600", provider_options={"p": {"cache": True}}),
            FilePart("application/octet-stream", data=BLOB, filename="blob.bin"),
            FilePart("image/png", url="https://example.invalid/a.png"),
            ReasoningPart("thinking", signature="sig", redacted_data=b"\x00\x01\xfe"),
            ToolCallPart("call-1", "search", args={"q": "x", "n": [1, 2.5, None, True]}, client_tool=True),
            ToolResultPart("call-1", "search", result={"hits": []}, is_error=True, args={"q": "x"}),
            DataPart("data-progress", data={"pct": 50}, id="d-1"),
        ],
        id="m-every",
        metadata={"step": 1, "nested": {"k": [1, "2"]}},
        provider_options={"p": {"x": 1}},
        thread_id=thread_id,
        resource_id="r-1",
        created_at=T0,
    )
    reactive = create_signal(
        "reactive",
        [TextPart("look"), FilePart("text/plain", data=b"file \x00 bytes", filename="a.txt")],
        attributes=[("b", 1), ("a", "two")],
        metadata={"source": "test"},
        transient=True,
        id="m-reactive",
        created_at=T0 + timedelta(seconds=1),
    )
    user = create_signal("user", "hi there", tag_name="note", id="m-user-signal", created_at=T0 + timedelta(seconds=2))
    # Not in UTC: read back as given.
    elsewhere = (T0 + timedelta(seconds=3)).astimezone(timezone(timedelta(hours=2)))
    return [
        assistant,
        to_db_message(reactive, thread_id=thread_id, resource_id="r-1"),
        to_db_message(user, thread_id=thread_id, resource_id="r-1"),
        text(thread_id, "m-elsewhere", "from elsewhere", at=elsewhere),
    ]


async def test_messages_round_trip_every_part_type(storage: Storage) -> None:
    await storage.create_thread(thread())
    originals = every_part_messages("t-1")
    assert isinstance(originals[1].parts[0], SignalPart)
    await storage.save_messages(originals)
    assert await storage.get_messages(ids(originals)) == originals
    listed = await storage.list_messages(MessageQuery("t-1", include_system_reminders=True))
    assert listed.messages == originals and listed.next_cursor is None
    stored = listed.messages[0]
    assert isinstance(stored.parts[1], FilePart) and stored.parts[1].data == BLOB
    assert stored.created_at.tzinfo == UTC
    assert listed.messages[3].created_at.utcoffset() == timedelta(hours=2)


async def test_save_messages_needs_an_existing_thread(storage: Storage) -> None:
    await storage.create_thread(thread())
    with pytest.raises(StorageError):
        await storage.save_messages([text("t-1", "ok", "fine"), text("missing", "bad", "no thread")])
    with pytest.raises(StorageError):
        await storage.save_messages([Message.user("no thread id")])
    # Nothing of a failed batch is stored.
    assert await storage.get_messages(["ok", "bad"]) == []
    await storage.save_messages([])


async def test_an_upsert_keeps_the_position(storage: Storage) -> None:
    await storage.create_thread(thread())
    await storage.save_messages([text("t-1", f"m{i}", f"v1 {i}") for i in range(1, 4)])  # one created_at
    await storage.save_messages([text("t-1", "m1", "v2 1")])
    listed = (await storage.list_messages(MessageQuery("t-1"))).messages
    assert ids(listed) == ["m1", "m2", "m3"] and listed[0].text == "v2 1"
    # New and existing in one batch; the same id twice: the last wins.
    await storage.save_messages([text("t-1", "m4", "v1 4"), text("t-1", "m2", "v2 2"), text("t-1", "m2", "v3 2")])
    listed = (await storage.list_messages(MessageQuery("t-1"))).messages
    assert ids(listed) == ["m1", "m2", "m3", "m4"]
    assert [m.text for m in listed] == ["v2 1", "v3 2", "v1 3", "v1 4"]
    # Turning a row into a hidden reminder keeps its place too.
    await storage.save_messages([reminder("t-1", "m3")])
    assert ids((await storage.list_messages(MessageQuery("t-1"))).messages) == ["m1", "m2", "m4"]
    everything = await storage.list_messages(MessageQuery("t-1", include_system_reminders=True))
    assert ids(everything.messages) == ["m1", "m2", "m3", "m4"]


@pytest.mark.parametrize("limit", [1, 4, 5, 25, 100])
async def test_list_messages_pages_both_ways(storage: Storage, limit: int) -> None:
    await storage.create_thread(thread())
    # Triples share a created_at (ordered by insertion there); saved out of time order.
    messages = [text("t-1", f"m{i:02d}", str(i), at=T0 + timedelta(milliseconds=i // 3)) for i in range(25)]
    await storage.save_messages(messages[10:])
    await storage.save_messages(messages[:10])
    in_order = sorted(messages, key=lambda m: (m.created_at, m in messages[:10], m.id))
    assert ids(await walk(storage, MessageQuery("t-1", limit=limit))) == ids(in_order)
    assert ids(await walk(storage, MessageQuery("t-1", limit=limit, order="desc"))) == ids(in_order)[::-1]
    unlimited = await storage.list_messages(MessageQuery("t-1", limit=None))
    assert ids(unlimited.messages) == ids(in_order) and unlimited.next_cursor is None
    if limit == 5:  # an exact multiple: the last full page has no cursor
        pages = 0
        cursor = None
        while True:
            page = await storage.list_messages(MessageQuery("t-1", limit=5, cursor=cursor))
            pages += 1
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert pages == 5
    assert (await storage.list_messages(MessageQuery("nothing-here"))).messages == []


async def test_date_range_bounds_are_inclusive(storage: Storage) -> None:
    await storage.create_thread(thread())
    at = [T0 + timedelta(minutes=i) for i in range(10)]
    await storage.save_messages([text("t-1", f"m{i}", str(i), at=at[i]) for i in range(10)])
    await storage.save_messages([text("t-1", "m5b", "5b", at=at[5])])  # a tie on the end bound
    expected = ["m2", "m3", "m4", "m5", "m5b"]
    for limit in (None, 1, 2, 40):
        query = MessageQuery("t-1", limit=limit, start=at[2], end=at[5])
        assert ids(await walk(storage, query)) == expected
        assert ids(await walk(storage, MessageQuery(**{**query.__dict__, "order": "desc"}))) == expected[::-1]
    assert ids(await walk(storage, MessageQuery("t-1", start=at[8]))) == ["m8", "m9"]
    assert ids(await walk(storage, MessageQuery("t-1", end=at[1], order="desc"))) == ["m1", "m0"]
    # The same instant in another time zone is the same bound.
    plus_one = timezone(timedelta(hours=1))
    query = MessageQuery("t-1", start=at[2].astimezone(plus_one), end=at[5].astimezone(plus_one))
    assert ids(await walk(storage, query)) == expected
    assert (await storage.list_messages(MessageQuery("t-1", start=at[5], end=at[2]))).messages == []
    between = MessageQuery("t-1", start=at[3] + timedelta(seconds=1), end=at[4] - timedelta(seconds=1))
    assert (await storage.list_messages(between)).messages == []


async def test_get_messages_in_the_order_asked(storage: Storage) -> None:
    await storage.create_thread(thread())
    await storage.save_messages([text("t-1", f"m{i}", str(i)) for i in range(1, 4)])
    assert ids(await storage.get_messages(["m3", "missing", "m1", "m2"])) == ["m3", "m1", "m2"]
    assert await storage.get_messages([]) == []


async def test_delete_messages(storage: Storage) -> None:
    await storage.create_thread(thread())
    await storage.save_messages([text("t-1", f"m{i}", str(i)) for i in range(1, 5)] + [reminder("t-1", "r1")])
    assert await storage.delete_messages(["m2", "m2", "missing", "r1"]) == 2
    assert ids((await storage.list_messages(MessageQuery("t-1", include_system_reminders=True))).messages) == [
        "m1",
        "m3",
        "m4",
    ]
    assert await storage.get_messages(["m2", "r1"]) == []
    assert await storage.delete_messages(["m2"]) == 0
    assert await storage.delete_messages([]) == 0
    # Saved again, a deleted message is a new one: it goes after the others.
    await storage.save_messages([text("t-1", "m2", "back")])
    assert ids((await storage.list_messages(MessageQuery("t-1"))).messages) == ["m1", "m3", "m4", "m2"]


async def test_system_reminders_are_hidden_unless_asked_for(storage: Storage) -> None:
    await storage.create_thread(thread())
    legacy = Message(
        role="system",
        parts=[TextPart("legacy reminder")],
        id="legacy",
        metadata={"systemReminder": True},
        thread_id="t-1",
        created_at=T0,
    )
    rows = [
        text("t-1", "u1", "hi"),
        reminder("t-1", "r1"),
        user_signal("t-1", "s1"),
        legacy,
        reminder("t-1", "r2"),
        text("t-1", "a1", "hello", role="assistant"),
        reminder("t-1", "r3"),
    ]
    await storage.save_messages(rows)
    visible = ["u1", "s1", "a1"]
    for limit in (None, 1, 2, 3, 10):
        assert ids(await walk(storage, MessageQuery("t-1", limit=limit))) == visible
        assert ids(await walk(storage, MessageQuery("t-1", limit=limit, order="desc"))) == visible[::-1]
        query = MessageQuery("t-1", limit=limit, include_system_reminders=True)
        assert ids(await walk(storage, query)) == ids(rows)
    # get_messages is by id: hidden rows too.
    assert ids(await storage.get_messages(["r1", "legacy"])) == ["r1", "legacy"]


async def test_last_messages_do_not_count_signal_rows(storage: Storage) -> None:
    await storage.create_thread(thread())
    rows = [
        text("t-1", "u1", "1"),
        text("t-1", "a1", "2", role="assistant"),
        reminder("t-1", "r1"),
        text("t-1", "u2", "3"),
        user_signal("t-1", "s1"),
        text("t-1", "a2", "4", role="assistant"),
    ]
    await storage.save_messages(rows)
    assert ids(await storage.last_messages("t-1", 1)) == ["a2"]
    assert ids(await storage.last_messages("t-1", 2)) == ["u2", "s1", "a2"]
    assert ids(await storage.last_messages("t-1", 3)) == ["a1", "r1", "u2", "s1", "a2"]
    assert ids(await storage.last_messages("t-1", 3, include_system_reminders=False)) == ["a1", "u2", "s1", "a2"]
    assert ids(await storage.last_messages("t-1", 10)) == ids(rows)
    assert await storage.last_messages("t-1", 0) == []

    # Over several pages: 30 real messages with a signal row after every third.
    await storage.create_thread(thread("long"))
    long_rows: list[Message] = []
    for i in range(30):
        long_rows.append(text("long", f"l{i:02d}", str(i), at=T0 + timedelta(seconds=i)))
        if i % 3 == 2:
            make = reminder if i % 2 else user_signal
            long_rows.append(make("long", f"sig{i:02d}", at=T0 + timedelta(seconds=i)))
    await storage.save_messages(long_rows)
    last = await storage.last_messages("long", 25)
    assert [m.id for m in last if m.role == "user"] == [f"l{i:02d}" for i in range(5, 30)]
    first_kept = ids(long_rows).index("l05")
    assert ids(last) == ids(long_rows)[first_kept:]


@pytest.mark.parametrize("order", ["asc", "desc"])
async def test_pagination_is_stable_during_concurrent_inserts(storage: Storage, order: Any) -> None:
    await storage.create_thread(thread())
    base = utcnow() - timedelta(hours=1)
    # Pairs share a created_at: ties are ordered by insertion sequence.
    seeded = [text("t-1", f"seed-{i:03d}", str(i), at=base + timedelta(milliseconds=i // 2)) for i in range(200)]
    for start in range(0, 200, 50):
        await storage.save_messages(seeded[start : start + 50])
    inserted: list[str] = []
    turns: asyncio.Queue[bool] = asyncio.Queue()
    done: asyncio.Queue[None] = asyncio.Queue()

    async def writer() -> None:
        """Inserts a batch whenever asked to: while the reader reads a page."""
        n = 0
        while await turns.get():
            n += 1
            batch = [text("t-1", f"new-{n:04d}-{k}", "late", at=utcnow()) for k in range(2)]
            # An upsert of a seeded message mid-walk must not move it either.
            old = seeded[(n * 37) % 200]
            await storage.save_messages([*batch, text("t-1", old.id, f"edited {n}", at=old.created_at)])
            inserted.extend(ids(batch))
            done.put_nowait(None)

    task = asyncio.create_task(writer())
    seen: list[Message] = []
    cursor: str | None = None
    pages = 0
    try:
        while True:
            turns.put_nowait(True)  # the writer's batch runs concurrently with this page read
            page = await storage.list_messages(MessageQuery("t-1", limit=7, order=order, cursor=cursor))
            await done.get()  # and has landed before the next page is read
            pages += 1
            seen += page.messages
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
    finally:
        turns.put_nowait(False)
        await task
    counts = Counter(ids(seen))
    assert {s.id: counts[s.id] for s in seeded} == {s.id: 1 for s in seeded}
    assert all(counts[i] <= 1 for i in inserted)
    assert set(counts) <= {s.id for s in seeded} | set(inserted)
    assert pages >= 200 // 7
    assert len(inserted) == 2 * pages
    if order == "asc":  # the walk caught up with the writer: most inserts were seen
        assert sum(counts[i] for i in inserted) >= len(inserted) - 2 * 2
    times = [m.created_at for m in seen]
    assert times == sorted(times, reverse=order == "desc")


async def test_concurrent_upserts_of_one_id_leave_one_row(storage: Storage) -> None:
    await storage.create_thread(thread())
    await storage.save_messages([text("t-1", "first", "0")])
    await asyncio.gather(*(storage.save_messages([text("t-1", "same", f"v{i}")]) for i in range(30)))
    await storage.save_messages([text("t-1", "last", "0")])
    listed = (await storage.list_messages(MessageQuery("t-1", limit=None))).messages
    assert ids(listed) == ["first", "same", "last"]
    assert listed[1].text in {f"v{i}" for i in range(30)}


async def test_ids_with_separator_characters(storage: Storage) -> None:
    odd = ["a:b", "a|b", "a:b|c:", "ünï cödé", ":"]
    for i, thread_id in enumerate(odd):
        await storage.create_thread(thread(thread_id, "r:|1", created_at=T0 + timedelta(seconds=i // 2)))
        await storage.save_messages([text(thread_id, f"{thread_id}:{k}|x", str(k), at=T0) for k in range(3)])
    walked: list[str] = []
    cursor = None
    while True:
        page = await storage.list_threads("r:|1", limit=2, cursor=cursor)
        walked += [t.id for t in page.threads]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    expected = sorted(odd, key=lambda t: (odd.index(t) // 2, t), reverse=True)
    assert walked == expected
    for thread_id in odd:
        got = await walk(storage, MessageQuery(thread_id, limit=1, order="desc"))
        assert ids(got) == [f"{thread_id}:{k}|x" for k in (2, 1, 0)]
    assert await storage.delete_thread("a:b") is True
    assert await storage.get_messages(["a:b:0|x", "a:b|c::0|x"]) == [text("a:b|c:", "a:b|c::0|x", "0")]


@pytest.mark.parametrize(
    "storage",
    [
        "memory",
        "sqlite",
        "redis",
    ],
    indirect=True,
)
async def test_pages_follow_instants_across_time_zones(storage: Storage) -> None:
    await storage.create_thread(thread())
    plus_two = timezone(timedelta(hours=2))
    at = [
        datetime(2024, 1, 1, 7, tzinfo=UTC).astimezone(plus_two),  # 09:00+02:00
        datetime(2024, 1, 1, 8, tzinfo=UTC),
        datetime(2024, 1, 1, 8, 30, tzinfo=UTC).astimezone(plus_two),
        datetime(2024, 1, 1, 9, 15, tzinfo=UTC),
    ]
    await storage.save_messages([text("t-1", f"m{i}", str(i), at=when) for i, when in enumerate(at)])
    assert ids(await walk(storage, MessageQuery("t-1", limit=1))) == ["m0", "m1", "m2", "m3"]
    assert ids(await walk(storage, MessageQuery("t-1", limit=1, order="desc"))) == ["m3", "m2", "m1", "m0"]


async def test_returned_objects_are_copies(storage: Storage) -> None:
    original = thread(title="t", metadata={"list": [1]})
    created = await storage.create_thread(original)
    original.metadata["list"].append(2)
    created.metadata["list"].append(3)
    created.title = "changed"
    got = await storage.get_thread("t-1")
    assert got is not None and got.metadata == {"list": [1]} and got.title == "t"
    got.metadata["new"] = True
    listed = (await storage.list_threads("r-1")).threads[0]
    assert listed.metadata == {"list": [1]}
    listed.metadata.clear()
    updated = await storage.update_thread("t-1", title="u")
    assert updated is not None
    updated.metadata["x"] = 1
    assert (await storage.get_thread("t-1")) == replace_thread(updated, metadata={"list": [1]})

    message = Message(role="user", parts=[TextPart("a")], id="m1", metadata={"k": [1]}, thread_id="t-1")
    await storage.save_messages([message])
    message.parts.append(TextPart("after save"))
    message.metadata["k"].append(2)
    first = (await storage.list_messages(MessageQuery("t-1"))).messages[0]
    assert first.text == "a" and first.metadata == {"k": [1]}
    first.parts.clear()
    first.metadata["k"].append(3)
    (again,) = await storage.get_messages(["m1"])
    assert again.text == "a" and again.metadata == {"k": [1]}
    again.parts[0] = TextPart("changed")
    twice = await storage.get_messages(["m1", "m1"])
    assert [m.text for m in twice] == ["a", "a"] and twice[0] is not twice[1]
    assert (await storage.last_messages("t-1", 1))[0].text == "a"


def replace_thread(t: Thread, **changes: Any) -> Thread:
    return Thread(**{**t.__dict__, **changes})


async def test_the_outbox_of_acknowledged_signals(storage: Storage) -> None:
    from agentd.runtime.signals import create_signal
    from agentd.runtime.storage import PendingSignal

    first = create_signal("user", "first", attributes={"name": "Ana"})
    second = create_signal("reactive", "second")
    base = datetime(2026, 1, 1, tzinfo=UTC)
    await storage.save_pending(PendingSignal(second, "chat", "u1", "t1", base + timedelta(seconds=1)))
    await storage.save_pending(PendingSignal(first, "chat", "u1", "t1", base))
    listed = await storage.list_pending()
    assert [e.signal.id for e in listed] == [first.id, second.id]  # oldest first
    assert listed[0].signal == first and (listed[0].agent_id, listed[0].thread_id) == ("chat", "t1")
    await storage.save_pending(PendingSignal(first, "chat", "u1", "t1", base))  # idempotent
    assert len(await storage.list_pending()) == 2
    await storage.delete_pending([first.id, "missing"])
    assert [e.signal.id for e in await storage.list_pending()] == [second.id]


async def test_background_work_in_flight_is_recorded_until_deleted(storage: Storage) -> None:
    base = datetime(2026, 1, 1, tzinfo=UTC)

    def task(task_id: str, at: datetime) -> BackgroundTask:
        return BackgroundTask(task_id, "chat", "u1", "t1", "run-1", "msg-1", "c1", "report", {"q": 1}, "r1", at)

    await storage.save_background_task(task("b2", base + timedelta(seconds=1)))
    await storage.save_background_task(task("b1", base))
    await storage.save_background_task(task("b1", base))  # the same record again
    listed = await storage.list_background_tasks()
    assert [t.task_id for t in listed] == ["b1", "b2"]  # oldest first
    assert listed[0] == task("b1", base)
    await storage.delete_background_task("b1")
    await storage.delete_background_task("missing")
    assert [t.task_id for t in await storage.list_background_tasks()] == ["b2"]
