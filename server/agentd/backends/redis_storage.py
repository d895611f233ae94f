"""RedisStorage: threads and messages on a Redis server, shared by agentd replicas.

Over redis.asyncio (redis-py). Every key starts with `key_prefix`:

    thread:<thread id>            hash: resource, title, metadata, created, updated
    resource-threads:<resource>   sorted set of the resource's threads
    thread-messages:<thread id>   sorted set of every message of the thread
    thread-visible:<thread id>    the same without system-reminder rows
    thread-bodies:<thread id>     hash: message id -> message
    message:<message id>          string: JSON [thread id, its member in the sets]
    sequence                      counter (INCRBY): message insertion sequences

Ordering: every sorted-set member has score 0, so the set is ordered by its
member bytes and ZRANGEBYLEX / ZREVRANGEBYLEX do keyset pagination. Times are
written as 20 zero-padded digits of microseconds since 0001-01-01 UTC (never
negative, so digit order is time order). A message member is
`<created>:<sequence, 20 digits>:<id>`: (created_at, sequence) order, exactly
the cursors' keyset; the sequence is drawn from `sequence` when a message is
first saved and kept by every later upsert. A thread member is
`<created>:<thread id>`: newest first with ZREVRANGEBYLEX, ties by id.
Listings without system reminders read `thread-visible`, so hidden rows cost
nothing to skip. Messages and thread metadata are the cache codec's tagged
JSON; times read back in UTC.

Consistency: every write that touches several keys is one MULTI/EXEC
transaction, guarded by WATCH on the keys it read first (the thread, the
message index entries) and retried when another client changed them, so a
reader never sees half a write and concurrent writers never lose an update.
A listing reads the member range, then the bodies: a message deleted between
the two reads is left out of that page (the cursor still moves past it).

Errors: an unreachable server, a timeout, a command error or a row that cannot
be decoded raise StorageError.

Durability: a write is as durable as the server makes it. In production run
Redis with `appendonly yes` (and `appendfsync everysec` or `always`); without
persistence a restarted server has lost every thread.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from redis.asyncio.client import Pipeline
from redis.typing import EncodableT, FieldT

from agentd.backends.redis_client import RedisBackend, begin, text
from agentd.backends.stored import decode_message, decode_thread, encode_metadata
from agentd.runtime import codec
from agentd.runtime.cache import CacheError
from agentd.runtime.messages import JSON, Message, utcnow
from agentd.runtime.storage import (
    BackgroundTask,
    MessagePage,
    MessageQuery,
    MetadataUpdate,
    PendingSignal,
    R,
    Storage,
    StorageError,
    Thread,
    ThreadExists,
    decode_message_cursor,
    encode_message_cursor,
    is_system_reminder,
)

__all__ = ["DEFAULT_KEY_PREFIX", "RedisStorage"]

DEFAULT_KEY_PREFIX = "agentd:store:"
#: Threads read per round trip when list_threads filters by metadata.
THREAD_BATCH = 100

_ORIGIN = datetime(1, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_DIGITS = 20


def time_key(when: datetime) -> str:
    """Microseconds since 0001-01-01 UTC, zero-padded: sorts as the time does
    (a naive datetime is taken as UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return f"{(when - _ORIGIN) // _MICROSECOND:0{_DIGITS}d}"


def time_of(key: str) -> datetime:
    return _ORIGIN + timedelta(microseconds=int(key))


def after_time(when: datetime) -> str:
    """The time key one microsecond later (an exclusive bound for "at most `when`")."""
    return f"{int(time_key(when)) + 1:0{_DIGITS}d}"


def sequence_key(sequence: int) -> str:
    """An insertion sequence, zero-padded: sorts as the number does."""
    return f"{sequence:0{_DIGITS}d}"


def ordered_member(when: datetime, sequence: int, id: str) -> str:
    """`<when>:<sequence>:<id>`: a member ordered by (when, sequence), the cursors' keyset."""
    return f"{time_key(when)}:{sequence_key(sequence)}:{id}"


def split_member(member: str) -> tuple[str, int, str]:
    """An ordered_member's (time key, sequence, id)."""
    when, sequence, id = member.split(":", 2)
    return when, int(sequence), id


class RedisStorage(RedisBackend, Storage):
    """Threads and messages on Redis (a RedisBackend)."""

    backend = "redis"
    shared = True
    default_key_prefix = DEFAULT_KEY_PREFIX
    error = StorageError
    label = "redis storage"
    undecodable = (CacheError,)
    malformed = (KeyError, IndexError, ValueError)  # a malformed index entry or member

    # ------------------------------------------------------------ helpers

    @staticmethod
    def _thread_fields(thread: Thread, created: datetime) -> dict[FieldT, EncodableT]:
        return {
            "resource": thread.resource_id,
            "title": thread.title,
            "metadata": encode_metadata(thread),
            "created": time_key(created),
            "updated": time_key(thread.updated_at),
        }

    @staticmethod
    def _thread(thread_id: str, raw: dict[Any, Any]) -> Thread:
        fields = {text(k): v for k, v in raw.items()}
        try:
            return decode_thread(
                thread_id,
                text(fields["resource"]),
                text(fields["title"]),
                fields["metadata"],
                time_of(text(fields["created"])),
                time_of(text(fields["updated"])),
            )
        except (KeyError, ValueError) as exc:
            raise StorageError(f"thread {thread_id}: a malformed stored thread ({exc})") from exc

    @staticmethod
    def _thread_member(thread_id: str, created: datetime) -> str:
        return f"{time_key(created)}:{thread_id}"

    def _listed(self, pipe: Pipeline, thread: Thread) -> None:
        """Queues the thread's entry in its resource's listing."""
        pipe.zadd(
            self.key("resource-threads", thread.resource_id), {self._thread_member(thread.id, thread.created_at): 0}
        )

    def _unlisted(self, pipe: Pipeline, thread: Thread) -> None:
        """Queues the removal of the thread's entry from its resource's listing."""
        pipe.zrem(self.key("resource-threads", thread.resource_id), self._thread_member(thread.id, thread.created_at))

    # ------------------------------------------------------------ threads

    async def get_thread(self, thread_id: str) -> Thread | None:
        with self.failures("get_thread"):
            raw = await self.client.hgetall(self.key("thread", thread_id))
            return self._thread(thread_id, raw) if raw else None

    async def create_thread(self, thread: Thread) -> Thread:
        fields = self._thread_fields(thread, thread.created_at)
        key = self.key("thread", thread.id)

        async def create(pipe: Pipeline) -> Thread:
            await pipe.watch(key)
            if await pipe.exists(key):
                raise ThreadExists(thread.id)
            begin(pipe)
            pipe.hset(key, mapping=fields)
            self._listed(pipe, thread)
            await pipe.execute()
            return self._thread(thread.id, fields)

        with self.failures("create_thread"):
            return await self.optimistic(f"create_thread {thread.id}", create)

    async def save_thread(self, thread: Thread) -> Thread:
        key = self.key("thread", thread.id)

        async def save(pipe: Pipeline) -> Thread:
            await pipe.watch(key)
            raw = await pipe.hgetall(key)
            old = self._thread(thread.id, raw) if raw else None
            fields = self._thread_fields(thread, old.created_at if old else thread.created_at)
            stored = self._thread(thread.id, fields)
            begin(pipe)
            if old is not None:
                self._unlisted(pipe, old)
            pipe.hset(key, mapping=fields)
            self._listed(pipe, stored)
            await pipe.execute()
            return stored

        with self.failures("save_thread"):
            return await self.optimistic(f"save_thread {thread.id}", save)

    async def update_thread(
        self, thread_id: str, *, title: str | None = None, metadata: dict[str, JSON] | None = None
    ) -> Thread | None:
        key = self.key("thread", thread_id)

        async def update(pipe: Pipeline) -> Thread | None:
            await pipe.watch(key)
            raw = await pipe.hgetall(key)
            if not raw:
                return None
            thread = self._thread(thread_id, raw)
            if title is not None:
                thread.title = title
            if metadata is not None:
                thread.metadata = metadata
            thread.updated_at = utcnow()
            fields = self._thread_fields(thread, thread.created_at)
            begin(pipe)
            pipe.hset(key, mapping=fields)
            await pipe.execute()
            return self._thread(thread_id, fields)

        with self.failures("update_thread"):
            return await self.optimistic(f"update_thread {thread_id}", update)

    async def update_thread_metadata(self, thread_id: str, fn: MetadataUpdate[R]) -> tuple[Thread, R] | None:
        key = self.key("thread", thread_id)

        # Optimistic: a write to the thread after WATCH fails EXEC, and `fn`
        # runs again on what that write stored.
        async def update(pipe: Pipeline) -> tuple[Thread, R] | None:
            with self.failures("update_thread_metadata"):
                await pipe.watch(key)
                raw = await pipe.hgetall(key)
                if not raw:
                    return None
                thread = self._thread(thread_id, raw)
            metadata, result = fn(thread.metadata)  # outside failures: its errors are its own
            if metadata is None:
                return self._thread(thread_id, raw), result  # as stored, whatever `fn` did to its copy
            thread.metadata = metadata
            thread.updated_at = utcnow()
            fields = self._thread_fields(thread, thread.created_at)
            with self.failures("update_thread_metadata"):
                begin(pipe)
                pipe.hset(key, mapping=fields)
                await pipe.execute()
            return self._thread(thread_id, fields), result

        return await self.optimistic(f"update_thread_metadata {thread_id}", update)

    async def delete_thread(self, thread_id: str) -> bool:
        key = self.key("thread", thread_id)
        messages_key = self.key("thread-messages", thread_id)

        async def delete(pipe: Pipeline) -> bool:
            # Watching the message set: a message saved meanwhile makes this retry
            # (and be deleted too), never stay behind without its thread.
            await pipe.watch(key, messages_key)
            raw = await pipe.hgetall(key)
            if not raw:
                return False
            thread = self._thread(thread_id, raw)
            members = [text(m) for m in await pipe.zrange(messages_key, 0, -1)]
            begin(pipe)
            pipe.delete(key, messages_key, self.key("thread-visible", thread_id), self.key("thread-bodies", thread_id))
            self._unlisted(pipe, thread)
            index_keys = [self.key("message", split_member(m)[2]) for m in members]
            for start in range(0, len(index_keys), 1000):
                pipe.delete(*index_keys[start : start + 1000])
            await pipe.execute()
            return True

        with self.failures("delete_thread"):
            return await self.optimistic(f"delete_thread {thread_id}", delete)

    async def select_threads(
        self, resource_id: str, before: tuple[datetime, str] | None, count: int, metadata: dict[str, JSON]
    ) -> list[Thread]:
        key = self.key("resource-threads", resource_id)
        upper = "+" if before is None else "(" + self._thread_member(before[1], before[0])
        batch = max(count, THREAD_BATCH) if metadata else count
        found: list[Thread] = []
        with self.failures("list_threads"):
            while len(found) < count:
                members = [text(m) for m in await self.client.zrevrangebylex(key, upper, "-", start=0, num=batch)]
                if not members:
                    break
                ids = [m.split(":", 1)[1] for m in members]
                async with self.client.pipeline(transaction=False) as pipe:
                    for thread_id in ids:
                        pipe.hgetall(self.key("thread", thread_id))
                    rows = await pipe.execute()
                for thread_id, raw in zip(ids, rows, strict=True):
                    if not raw:  # deleted since the range was read
                        continue
                    thread = self._thread(thread_id, raw)
                    if thread.resource_id != resource_id:  # moved since
                        continue
                    if all(thread.metadata.get(k) == v for k, v in metadata.items()):
                        found.append(thread)
                        if len(found) == count:
                            break
                if len(members) < batch:
                    break
                upper = "(" + members[-1]
        return found

    # ------------------------------------------------------------ messages

    async def save_messages(self, messages: Sequence[Message]) -> None:
        # The last of several messages with one id wins (it keeps the first's sequence).
        latest: dict[str, Message] = {}
        bodies: dict[str, bytes] = {}
        for message in messages:
            if not message.thread_id:
                raise StorageError(f"message {message.id}: thread {message.thread_id!r} does not exist")
            try:
                bodies[message.id] = codec.encode(message)
            except CacheError as exc:
                raise StorageError(f"message {message.id} cannot be stored: {exc}") from exc
            latest[message.id] = message
        if not latest:
            return
        thread_ids = list(dict.fromkeys(m.thread_id for m in latest.values() if m.thread_id))
        thread_keys = [self.key("thread", t) for t in thread_ids]
        ids = list(latest)
        index_keys = [self.key("message", i) for i in ids]

        async def save(pipe: Pipeline) -> None:
            await pipe.watch(*thread_keys, *index_keys)
            if await pipe.exists(*thread_keys) != len(thread_keys):
                for thread_id, key in zip(thread_ids, thread_keys, strict=True):
                    if not await pipe.exists(key):
                        missing = next(m for m in latest.values() if m.thread_id == thread_id)
                        raise StorageError(f"message {missing.id}: thread {thread_id!r} does not exist")
            olds = await pipe.mget(index_keys)
            fresh = sum(old is None for old in olds)
            top = int(await pipe.incrby(self.key("sequence"), fresh)) if fresh else 0
            next_sequence = top - fresh + 1
            begin(pipe)
            for message_id, old in zip(ids, olds, strict=True):
                message = latest[message_id]
                target = message.thread_id
                assert target is not None
                if old is None:
                    sequence, next_sequence = next_sequence, next_sequence + 1
                else:
                    old_thread, old_member = json.loads(text(old))
                    sequence = split_member(old_member)[1]
                    pipe.zrem(self.key("thread-messages", old_thread), old_member)
                    pipe.zrem(self.key("thread-visible", old_thread), old_member)
                    if old_thread != target:
                        pipe.hdel(self.key("thread-bodies", old_thread), message_id)
                member = ordered_member(message.created_at, sequence, message_id)
                pipe.zadd(self.key("thread-messages", target), {member: 0})
                if not is_system_reminder(message):
                    pipe.zadd(self.key("thread-visible", target), {member: 0})
                pipe.hset(self.key("thread-bodies", target), message_id, bodies[message_id])
                pipe.set(self.key("message", message_id), json.dumps([target, member]))
            await pipe.execute()

        with self.failures("save_messages"):
            await self.optimistic("save_messages", save)

    async def list_messages(self, query: MessageQuery) -> MessagePage:
        key = (
            self.key("thread-messages", query.thread_id)
            if query.include_system_reminders
            else self.key("thread-visible", query.thread_id)
        )
        # Inclusive lower bounds ("[" + a member prefix) and exclusive upper ones ("(" + ...):
        # of two, the larger lower and the smaller upper bound apply.
        lowers: list[str] = []
        uppers: list[str] = []
        if query.start is not None:
            lowers.append(time_key(query.start))
        if query.end is not None:
            uppers.append(after_time(query.end))
        if query.cursor is not None:
            when, sequence = decode_message_cursor(query.cursor)
            if query.order == "asc":
                lowers.append(f"{time_key(when)}:{sequence_key(sequence + 1)}")
            else:
                uppers.append(f"{time_key(when)}:{sequence_key(sequence)}")
        low = "[" + max(lowers) if lowers else "-"
        high = "(" + min(uppers) if uppers else "+"
        paging: dict[str, int] = {} if query.limit is None else {"start": 0, "num": max(query.limit, 0) + 1}
        with self.failures("list_messages"):
            if query.order == "asc":
                raw = await self.client.zrangebylex(key, low, high, **paging)
            else:
                raw = await self.client.zrevrangebylex(key, high, low, **paging)
            members = [split_member(text(m)) for m in raw]
            page = members if query.limit is None else members[: query.limit]
            more = query.limit is not None and len(members) > query.limit
            found = (
                await self.client.hmget(self.key("thread-bodies", query.thread_id), [m[2] for m in page])
                if page
                else []
            )
            messages = [decode_message(body, "a stored message") for body in found if body is not None]
        next_cursor = None
        if more and page:
            created, sequence, message_id = page[-1]
            when = time_of(created)
            last = messages[-1] if messages else None
            if last is not None and last.id == message_id and time_key(last.created_at) == created:
                when = last.created_at  # the cursor text every backend writes
            next_cursor = encode_message_cursor(when, sequence)
        return MessagePage(messages, next_cursor)

    async def get_messages(self, ids: Sequence[str]) -> list[Message]:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return []
        with self.failures("get_messages"):
            entries = await self.client.mget([self.key("message", i) for i in unique])
            where = {i: json.loads(text(e))[0] for i, e in zip(unique, entries, strict=True) if e is not None}
            if not where:
                return []
            async with self.client.pipeline(transaction=False) as pipe:
                for message_id, thread_id in where.items():
                    pipe.hget(self.key("thread-bodies", thread_id), message_id)
                found = await pipe.execute()
            bodies = {i: b for i, b in zip(where, found, strict=True) if b is not None}
            # Decoded once per occurrence: a repeated id gives two separate copies.
            return [decode_message(bodies[i], "a stored message") for i in ids if i in bodies]

    async def delete_messages(self, ids: Sequence[str]) -> int:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return 0
        index_keys = [self.key("message", i) for i in unique]

        async def delete(pipe: Pipeline) -> int:
            await pipe.watch(*index_keys)
            entries = await pipe.mget(index_keys)
            begin(pipe)
            deleted = 0
            for message_id, key, entry in zip(unique, index_keys, entries, strict=True):
                if entry is None:
                    continue
                thread_id, member = json.loads(text(entry))
                pipe.delete(key)
                pipe.zrem(self.key("thread-messages", thread_id), member)
                pipe.zrem(self.key("thread-visible", thread_id), member)
                pipe.hdel(self.key("thread-bodies", thread_id), message_id)
                deleted += 1
            if deleted:
                await pipe.execute()
            return deleted

        with self.failures("delete_messages"):
            return await self.optimistic("delete_messages", delete)

    # ------------------------------------------------------------ the outbox of acknowledged signals

    async def save_pending(self, entry: PendingSignal) -> None:
        with self.failures("save_pending"):
            await self.client.hset(self.key("pending-signals"), entry.signal.id, codec.encode(entry))

    async def delete_pending(self, signal_ids: Sequence[str]) -> None:
        if signal_ids:
            with self.failures("delete_pending"):
                await self.client.hdel(self.key("pending-signals"), *signal_ids)

    async def list_pending(self) -> list[PendingSignal]:
        with self.failures("list_pending"):
            bodies = await self.client.hvals(self.key("pending-signals"))
        entries: list[PendingSignal] = [codec.decode(b if isinstance(b, bytes) else b.encode()) for b in bodies]
        return sorted(entries, key=lambda e: e.created_at)

    # ------------------------------------------------------------ background work in flight

    async def save_background_task(self, task: BackgroundTask) -> None:
        with self.failures("save_background_task"):
            await self.client.hset(self.key("background-tasks"), task.task_id, codec.encode(task))

    async def delete_background_task(self, task_id: str) -> None:
        with self.failures("delete_background_task"):
            await self.client.hdel(self.key("background-tasks"), task_id)

    async def list_background_tasks(self) -> list[BackgroundTask]:
        with self.failures("list_background_tasks"):
            bodies = await self.client.hvals(self.key("background-tasks"))
        tasks: list[BackgroundTask] = [codec.decode(b if isinstance(b, bytes) else b.encode()) for b in bodies]
        return sorted(tasks, key=lambda t: t.created_at)
