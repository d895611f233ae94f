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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError, WatchError
from redis.typing import EncodableT, FieldT

from agentd.backends.redis_client import DEFAULT_MAX_CONNECTIONS, DEFAULT_SOCKET_TIMEOUT, pooled_client, text
from agentd.runtime import codec
from agentd.runtime.cache import CacheError
from agentd.runtime.messages import JSON, Message, utcnow
from agentd.runtime.storage import (
    MessagePage,
    MessageQuery,
    MetadataUpdate,
    PendingSignal,
    R,
    Storage,
    StorageError,
    Thread,
    ThreadExists,
    ThreadPage,
    decode_message_cursor,
    decode_thread_cursor,
    encode_message_cursor,
    encode_thread_cursor,
    is_system_reminder,
)

__all__ = ["DEFAULT_KEY_PREFIX", "RedisStorage"]

DEFAULT_KEY_PREFIX = "agentd:store:"
#: Optimistic transactions retried this often before giving up (StorageError).
MAX_ATTEMPTS = 100
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


def _time(key: str) -> datetime:
    return _ORIGIN + timedelta(microseconds=int(key))


def _after_time(when: datetime) -> str:
    """The time key one microsecond later (an exclusive bound for "at most `when`")."""
    return f"{int(time_key(when)) + 1:0{_DIGITS}d}"


def message_member(created_at: datetime, sequence: int, message_id: str) -> str:
    return f"{time_key(created_at)}:{sequence:0{_DIGITS}d}:{message_id}"


def _split_member(member: str) -> tuple[str, int, str]:
    created, sequence, message_id = member.split(":", 2)
    return created, int(sequence), message_id


def _begin(pipe: Pipeline) -> None:
    """MULTI: the commands after it are queued and run by execute() as one transaction."""
    pipe.multi()  # type: ignore[no-untyped-call]  # untyped in redis-py


class RedisStorage(Storage):
    """Threads and messages on Redis: give a `url` (redis://host:port/db) or a `client`.

    A client built from `url` has a pool of at most `max_connections`; a call
    waits at most `socket_timeout` seconds for a free connection. A passed
    `client` keeps its own settings and is closed by `close()` only when
    `close_client` is true.
    """

    backend = "redis"
    shared = True

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Redis | None = None,
        key_prefix: str = DEFAULT_KEY_PREFIX,
        socket_timeout: float | None = DEFAULT_SOCKET_TIMEOUT,
        socket_connect_timeout: float | None = DEFAULT_SOCKET_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        close_client: bool | None = None,
    ) -> None:
        self.client, self._close_client = pooled_client(
            "RedisStorage",
            url,
            client,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_connect_timeout,
            max_connections=max_connections,
            close_client=close_client,
        )
        self.key_prefix = key_prefix

    def __repr__(self) -> str:
        return f"RedisStorage(key_prefix={self.key_prefix!r})"

    # ------------------------------------------------------------ keys

    def _thread_key(self, thread_id: str) -> str:
        return f"{self.key_prefix}thread:{thread_id}"

    def _resource_key(self, resource_id: str) -> str:
        return f"{self.key_prefix}resource-threads:{resource_id}"

    def _messages_key(self, thread_id: str) -> str:
        return f"{self.key_prefix}thread-messages:{thread_id}"

    def _visible_key(self, thread_id: str) -> str:
        return f"{self.key_prefix}thread-visible:{thread_id}"

    def _bodies_key(self, thread_id: str) -> str:
        return f"{self.key_prefix}thread-bodies:{thread_id}"

    def _index_key(self, message_id: str) -> str:
        return f"{self.key_prefix}message:{message_id}"

    @property
    def _sequence_key(self) -> str:
        return f"{self.key_prefix}sequence"

    # ------------------------------------------------------------ helpers

    @contextmanager
    def _failures(self, op: str) -> Iterator[None]:
        try:
            yield
        except CacheError as exc:
            raise StorageError(f"redis storage {op}: {exc}") from exc
        except (KeyError, IndexError, ValueError) as exc:  # a malformed index entry or member
            raise StorageError(f"redis storage {op}: a malformed stored entry ({type(exc).__name__}: {exc})") from exc
        except (RedisError, OSError) as exc:
            raise StorageError(f"redis storage {op} failed: {type(exc).__name__}: {exc}") from exc

    def _transaction(self) -> Pipeline:
        return self.client.pipeline(transaction=True)

    @staticmethod
    def _thread_fields(thread: Thread, created: datetime) -> dict[FieldT, EncodableT]:
        try:
            metadata = codec.encode(thread.metadata)
        except CacheError as exc:
            raise StorageError(f"thread {thread.id}: metadata cannot be stored: {exc}") from exc
        return {
            "resource": thread.resource_id,
            "title": thread.title,
            "metadata": metadata,
            "created": time_key(created),
            "updated": time_key(thread.updated_at),
        }

    @staticmethod
    def _thread(thread_id: str, raw: dict[Any, Any]) -> Thread:
        fields = {text(k): v for k, v in raw.items()}
        try:
            metadata = codec.decode(fields["metadata"])
            if not isinstance(metadata, dict):
                raise StorageError(f"thread {thread_id}: stored metadata is not a dict")
            return Thread(
                id=thread_id,
                resource_id=text(fields["resource"]),
                title=text(fields["title"]),
                metadata=metadata,
                created_at=_time(text(fields["created"])),
                updated_at=_time(text(fields["updated"])),
            )
        except (KeyError, ValueError) as exc:
            raise StorageError(f"thread {thread_id}: a malformed stored thread ({exc})") from exc

    @staticmethod
    def _message(body: bytes | str) -> Message:
        message = codec.decode(body)
        if not isinstance(message, Message):
            raise StorageError(f"a stored message holds a {type(message).__name__}")
        return message

    @staticmethod
    def _thread_member(thread_id: str, created: datetime) -> str:
        return f"{time_key(created)}:{thread_id}"

    # ------------------------------------------------------------ threads

    async def get_thread(self, thread_id: str) -> Thread | None:
        with self._failures("get_thread"):
            raw = await self.client.hgetall(self._thread_key(thread_id))
            return self._thread(thread_id, raw) if raw else None

    async def create_thread(self, thread: Thread) -> Thread:
        fields = self._thread_fields(thread, thread.created_at)
        key = self._thread_key(thread.id)
        with self._failures("create_thread"):
            for _ in range(MAX_ATTEMPTS):
                async with self._transaction() as pipe:
                    try:
                        await pipe.watch(key)
                        if await pipe.exists(key):
                            raise ThreadExists(thread.id)
                        _begin(pipe)
                        pipe.hset(key, mapping=fields)
                        pipe.zadd(
                            self._resource_key(thread.resource_id),
                            {self._thread_member(thread.id, thread.created_at): 0},
                        )
                        await pipe.execute()
                        return self._thread(thread.id, fields)
                    except WatchError:
                        continue
        raise StorageError(f"redis storage create_thread {thread.id}: too many concurrent changes")

    async def save_thread(self, thread: Thread) -> Thread:
        key = self._thread_key(thread.id)
        with self._failures("save_thread"):
            for _ in range(MAX_ATTEMPTS):
                async with self._transaction() as pipe:
                    try:
                        await pipe.watch(key)
                        raw = await pipe.hgetall(key)
                        old = self._thread(thread.id, raw) if raw else None
                        fields = self._thread_fields(thread, old.created_at if old else thread.created_at)
                        stored = self._thread(thread.id, fields)
                        _begin(pipe)
                        if old is not None:
                            pipe.zrem(self._resource_key(old.resource_id), self._thread_member(old.id, old.created_at))
                        pipe.hset(key, mapping=fields)
                        pipe.zadd(
                            self._resource_key(stored.resource_id),
                            {self._thread_member(stored.id, stored.created_at): 0},
                        )
                        await pipe.execute()
                        return stored
                    except WatchError:
                        continue
        raise StorageError(f"redis storage save_thread {thread.id}: too many concurrent changes")

    async def update_thread(
        self, thread_id: str, *, title: str | None = None, metadata: dict[str, JSON] | None = None
    ) -> Thread | None:
        key = self._thread_key(thread_id)
        with self._failures("update_thread"):
            for _ in range(MAX_ATTEMPTS):
                async with self._transaction() as pipe:
                    try:
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
                        _begin(pipe)
                        pipe.hset(key, mapping=fields)
                        await pipe.execute()
                        return self._thread(thread_id, fields)
                    except WatchError:
                        continue
        raise StorageError(f"redis storage update_thread {thread_id}: too many concurrent changes")

    async def update_thread_metadata(self, thread_id: str, fn: MetadataUpdate[R]) -> tuple[Thread, R] | None:
        key = self._thread_key(thread_id)
        for _ in range(MAX_ATTEMPTS):
            async with self._transaction() as pipe:  # leaving it unwatches
                # Optimistic: a write to the thread after WATCH fails EXEC, and `fn`
                # runs again on what that write stored.
                with self._failures("update_thread_metadata"):
                    await pipe.watch(key)
                    raw = await pipe.hgetall(key)
                    if not raw:
                        return None
                    thread = self._thread(thread_id, raw)
                metadata, result = fn(thread.metadata)  # outside _failures: its errors are its own
                if metadata is None:
                    return self._thread(thread_id, raw), result  # as stored, whatever `fn` did to its copy
                thread.metadata = metadata
                thread.updated_at = utcnow()
                fields = self._thread_fields(thread, thread.created_at)
                with self._failures("update_thread_metadata"):
                    try:
                        _begin(pipe)
                        pipe.hset(key, mapping=fields)
                        await pipe.execute()
                    except WatchError:
                        continue
                return self._thread(thread_id, fields), result
        raise StorageError(f"redis storage update_thread_metadata {thread_id}: too many concurrent changes")

    async def delete_thread(self, thread_id: str) -> bool:
        key = self._thread_key(thread_id)
        messages_key = self._messages_key(thread_id)
        with self._failures("delete_thread"):
            for _ in range(MAX_ATTEMPTS):
                async with self._transaction() as pipe:
                    try:
                        # Watching the message set: a message saved meanwhile makes this retry
                        # (and be deleted too), never stay behind without its thread.
                        await pipe.watch(key, messages_key)
                        raw = await pipe.hgetall(key)
                        if not raw:
                            return False
                        thread = self._thread(thread_id, raw)
                        members = [text(m) for m in await pipe.zrange(messages_key, 0, -1)]
                        _begin(pipe)
                        pipe.delete(key, messages_key, self._visible_key(thread_id), self._bodies_key(thread_id))
                        pipe.zrem(
                            self._resource_key(thread.resource_id), self._thread_member(thread_id, thread.created_at)
                        )
                        index_keys = [self._index_key(_split_member(m)[2]) for m in members]
                        for start in range(0, len(index_keys), 1000):
                            pipe.delete(*index_keys[start : start + 1000])
                        await pipe.execute()
                        return True
                    except WatchError:
                        continue
        raise StorageError(f"redis storage delete_thread {thread_id}: too many concurrent changes")

    async def list_threads(
        self,
        resource_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        metadata: dict[str, JSON] | None = None,
    ) -> ThreadPage:
        key = self._resource_key(resource_id)
        upper = "+"
        if cursor is not None:
            when, after_id = decode_thread_cursor(cursor)
            upper = "(" + self._thread_member(after_id, when)
        limit = max(limit, 0)
        batch = max(limit + 1, THREAD_BATCH) if metadata else limit + 1
        found: list[Thread] = []
        with self._failures("list_threads"):
            while len(found) <= limit:
                members = [text(m) for m in await self.client.zrevrangebylex(key, upper, "-", start=0, num=batch)]
                if not members:
                    break
                ids = [m.split(":", 1)[1] for m in members]
                async with self.client.pipeline(transaction=False) as pipe:
                    for thread_id in ids:
                        pipe.hgetall(self._thread_key(thread_id))
                    rows = await pipe.execute()
                for thread_id, raw in zip(ids, rows, strict=True):
                    if not raw:  # deleted since the range was read
                        continue
                    thread = self._thread(thread_id, raw)
                    if thread.resource_id != resource_id:  # moved since
                        continue
                    if all(thread.metadata.get(k) == v for k, v in (metadata or {}).items()):
                        found.append(thread)
                        if len(found) > limit:
                            break
                if len(members) < batch:
                    break
                upper = "(" + members[-1]
        page = found[:limit]
        more = len(found) > limit
        return ThreadPage(page, encode_thread_cursor(page[-1]) if more and page else None)

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
        thread_keys = [self._thread_key(t) for t in thread_ids]
        ids = list(latest)
        index_keys = [self._index_key(i) for i in ids]
        with self._failures("save_messages"):
            for _ in range(MAX_ATTEMPTS):
                async with self._transaction() as pipe:
                    try:
                        await pipe.watch(*thread_keys, *index_keys)
                        if await pipe.exists(*thread_keys) != len(thread_keys):
                            for thread_id, key in zip(thread_ids, thread_keys, strict=True):
                                if not await pipe.exists(key):
                                    missing = next(m for m in latest.values() if m.thread_id == thread_id)
                                    raise StorageError(f"message {missing.id}: thread {thread_id!r} does not exist")
                        olds = await pipe.mget(index_keys)
                        fresh = sum(old is None for old in olds)
                        top = int(await pipe.incrby(self._sequence_key, fresh)) if fresh else 0
                        next_sequence = top - fresh + 1
                        _begin(pipe)
                        for message_id, old in zip(ids, olds, strict=True):
                            message = latest[message_id]
                            target = message.thread_id
                            assert target is not None
                            if old is None:
                                sequence, next_sequence = next_sequence, next_sequence + 1
                            else:
                                old_thread, old_member = json.loads(text(old))
                                sequence = _split_member(old_member)[1]
                                pipe.zrem(self._messages_key(old_thread), old_member)
                                pipe.zrem(self._visible_key(old_thread), old_member)
                                if old_thread != target:
                                    pipe.hdel(self._bodies_key(old_thread), message_id)
                            member = message_member(message.created_at, sequence, message_id)
                            pipe.zadd(self._messages_key(target), {member: 0})
                            if not is_system_reminder(message):
                                pipe.zadd(self._visible_key(target), {member: 0})
                            pipe.hset(self._bodies_key(target), message_id, bodies[message_id])
                            pipe.set(self._index_key(message_id), json.dumps([target, member]))
                        await pipe.execute()
                        return
                    except WatchError:
                        continue
        raise StorageError("redis storage save_messages: too many concurrent changes")

    async def list_messages(self, query: MessageQuery) -> MessagePage:
        key = (
            self._messages_key(query.thread_id)
            if query.include_system_reminders
            else self._visible_key(query.thread_id)
        )
        # Inclusive lower bounds ("[" + a member prefix) and exclusive upper ones ("(" + ...):
        # of two, the larger lower and the smaller upper bound apply.
        lowers: list[str] = []
        uppers: list[str] = []
        if query.start is not None:
            lowers.append(time_key(query.start))
        if query.end is not None:
            uppers.append(_after_time(query.end))
        if query.cursor is not None:
            when, sequence = decode_message_cursor(query.cursor)
            if query.order == "asc":
                lowers.append(f"{time_key(when)}:{sequence + 1:0{_DIGITS}d}")
            else:
                uppers.append(f"{time_key(when)}:{sequence:0{_DIGITS}d}")
        low = "[" + max(lowers) if lowers else "-"
        high = "(" + min(uppers) if uppers else "+"
        paging: dict[str, int] = {} if query.limit is None else {"start": 0, "num": max(query.limit, 0) + 1}
        with self._failures("list_messages"):
            if query.order == "asc":
                raw = await self.client.zrangebylex(key, low, high, **paging)
            else:
                raw = await self.client.zrevrangebylex(key, high, low, **paging)
            members = [_split_member(text(m)) for m in raw]
            page = members if query.limit is None else members[: query.limit]
            more = query.limit is not None and len(members) > query.limit
            found = await self.client.hmget(self._bodies_key(query.thread_id), [m[2] for m in page]) if page else []
            messages = [self._message(body) for body in found if body is not None]
        next_cursor = None
        if more and page:
            created, sequence, message_id = page[-1]
            when = _time(created)
            last = messages[-1] if messages else None
            if last is not None and last.id == message_id and time_key(last.created_at) == created:
                when = last.created_at  # the cursor text every backend writes
            next_cursor = encode_message_cursor(when, sequence)
        return MessagePage(messages, next_cursor)

    async def get_messages(self, ids: Sequence[str]) -> list[Message]:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return []
        with self._failures("get_messages"):
            entries = await self.client.mget([self._index_key(i) for i in unique])
            where = {i: json.loads(text(e))[0] for i, e in zip(unique, entries, strict=True) if e is not None}
            if not where:
                return []
            async with self.client.pipeline(transaction=False) as pipe:
                for message_id, thread_id in where.items():
                    pipe.hget(self._bodies_key(thread_id), message_id)
                found = await pipe.execute()
            bodies = {i: b for i, b in zip(where, found, strict=True) if b is not None}
            # Decoded once per occurrence: a repeated id gives two separate copies.
            return [self._message(bodies[i]) for i in ids if i in bodies]

    async def delete_messages(self, ids: Sequence[str]) -> int:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return 0
        index_keys = [self._index_key(i) for i in unique]
        with self._failures("delete_messages"):
            for _ in range(MAX_ATTEMPTS):
                async with self._transaction() as pipe:
                    try:
                        await pipe.watch(*index_keys)
                        entries = await pipe.mget(index_keys)
                        _begin(pipe)
                        deleted = 0
                        for message_id, key, entry in zip(unique, index_keys, entries, strict=True):
                            if entry is None:
                                continue
                            thread_id, member = json.loads(text(entry))
                            pipe.delete(key)
                            pipe.zrem(self._messages_key(thread_id), member)
                            pipe.zrem(self._visible_key(thread_id), member)
                            pipe.hdel(self._bodies_key(thread_id), message_id)
                            deleted += 1
                        if deleted:
                            await pipe.execute()
                        return deleted
                    except WatchError:
                        continue
        raise StorageError("redis storage delete_messages: too many concurrent changes")

    # ------------------------------------------------------------ the outbox of acknowledged signals

    def _pending_key(self) -> str:
        return f"{self.key_prefix}pending-signals"

    async def save_pending(self, entry: PendingSignal) -> None:
        with self._failures("save_pending"):
            await self.client.hset(self._pending_key(), entry.signal.id, codec.encode(entry))

    async def delete_pending(self, signal_ids: Sequence[str]) -> None:
        if signal_ids:
            with self._failures("delete_pending"):
                await self.client.hdel(self._pending_key(), *signal_ids)

    async def list_pending(self) -> list[PendingSignal]:
        with self._failures("list_pending"):
            bodies = await self.client.hvals(self._pending_key())
        entries: list[PendingSignal] = [codec.decode(b if isinstance(b, bytes) else b.encode()) for b in bodies]
        return sorted(entries, key=lambda e: e.created_at)

    # ------------------------------------------------------------ lifecycle

    async def ping(self) -> bool:
        """True when the server answers (StorageError when it does not)."""
        with self._failures("ping"):
            return bool(await self.client.ping())

    async def close(self) -> None:
        if self._close_client:
            await self.client.aclose()
