"""RedisNotificationStore: the notifications inbox on a Redis server, shared by agentd replicas.

Over redis.asyncio (redis-py), built like RedisStorage (and able to share its
server and `key_prefix`: every key here starts with `key_prefix +
"notifications:"`, so the two never collide):

    notifications:records:<thread id>   hash: notification id -> [sequence, record]
    notifications:order:<thread id>     sorted set, the thread's listing order
    notifications:due                   sorted set of the pending records that have a due time
    notifications:twins:<digest>        set: ids of the pending records a create may coalesce into
    notifications:sequence              counter (INCR): insertion sequences

Records are the cache codec's tagged JSON (as in SQLiteNotificationStore:
attribute order, payload, tuples and timezone-aware times round-trip exactly),
stored with the insertion sequence drawn from `sequence` when the record is
created and kept by every later write; like SQLite's `seq` it breaks ties
exactly as the in-memory store does.

Ordering: every sorted-set member has score 0, so a set is ordered by its
member bytes (times are RedisStorage's `time_key`: 20 zero-padded digits of
microseconds, so digit order is time order; sequences are 20 digits too).

    order member  <updated_at>:<sequence>:<id>
                  ZREVRANGEBYLEX: newest update first, then newest inserted;
                  the page cursor (updated_at, sequence) is an exclusive upper bound.
    due member    <min(deliver_at, summary_at)>:<updated_at>:<sequence>:<JSON [thread id, id]>
                  ZRANGEBYLEX up to `now`: by due time, then update, then insertion.
                  Only pending records with a due time are in it (SQLite's partial index).

Coalescing: a pending record with a dedupe key is in the twin set named by a
digest of (thread, source, kind, agent, resource, "dedupe", key), and likewise
for its coalesce key, so `create` reads the candidates of its two keys and
picks the newest (updated_at, sequence) of those `matches_coalesce` accepts.

Consistency: every write (create, update, update_status, mark_delivered) is
one MULTI/EXEC transaction guarded by WATCH on the thread's records hash,
which every write to one of its records changes: the read (twin search, id
check, current record), the change (computed here with the runtime's
`coalesce_record` / `apply_patch` / `apply_delivered`, so the semantics are
the other stores') and the index updates commit together or are retried. So
two replicas creating the same dedupe key concurrently make one record
(coalesced twice), never two. A listing reads a member range, then the
records: a record changed between the two reads no longer matches its member
and is left out at that position (it has moved; keyset pages never repeat it).

Errors: an unreachable server, a timeout, a command error or an entry that
cannot be decoded raise StorageError (STORAGE_UNAVAILABLE at the API);
NotificationExists / NotificationNotFound / InvalidArgument as in every store.

Durability: as RedisStorage's; run Redis with `appendonly yes` in production.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime

from redis.asyncio.client import Pipeline

from agentd.backends.redis_client import RedisBackend, begin, text
from agentd.backends.redis_storage import (
    DEFAULT_KEY_PREFIX,
    after_time,
    ordered_member,
    sequence_key,
    split_member,
    time_key,
)
from agentd.runtime import codec
from agentd.runtime.cache import CacheError
from agentd.runtime.notifications.query import NotificationPage, NotificationQuery, matches_query, page_of
from agentd.runtime.notifications.record import NotificationRecord, due_at
from agentd.runtime.notifications.store import Creation, NotificationExists, NotificationStore
from agentd.runtime.storage import StorageError

__all__ = ["DEFAULT_KEY_PREFIX", "RedisNotificationStore"]

codec.register(NotificationRecord)

#: Members read per round trip when a listing filters (or list_due filters by agent or resource).
BATCH = 200
_GLOB_SPECIAL = frozenset("*?[]\\")

#: (sequence, record) as stored.
_Entry = tuple[int, NotificationRecord]


def _order_member(record: NotificationRecord, sequence: int) -> str:
    return ordered_member(record.updated_at, sequence, record.id)


def _due_member(record: NotificationRecord, sequence: int) -> str | None:
    """The due-index member; None when the record is not in that index."""
    due = due_at(record)
    if record.status != "pending" or due is None:
        return None
    reference = json.dumps([record.thread_id, record.id], ensure_ascii=False)
    return f"{time_key(due)}:{time_key(record.updated_at)}:{sequence_key(sequence)}:{reference}"


def _split_due(member: str) -> tuple[str, str, int, str, str]:
    due, updated, sequence, reference = member.split(":", 3)
    thread_id, notification_id = json.loads(reference)
    return due, updated, int(sequence), str(thread_id), str(notification_id)


def _encode(sequence: int, record: NotificationRecord) -> bytes:
    try:
        return codec.encode([sequence, record])
    except CacheError as exc:
        raise StorageError(f"notification {record.id} cannot be stored: {exc}") from exc


def _decode(raw: bytes | str) -> _Entry:
    value = codec.decode(raw)
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], int)
        or not isinstance(value[1], NotificationRecord)
    ):
        raise StorageError("a stored notification entry is not [sequence, record]")
    return value[0], value[1]


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in _GLOB_SPECIAL else c for c in text)


def _filtered(query: NotificationQuery) -> bool:
    return bool(
        query.statuses()
        or query.priorities()
        or query.source
        or query.resource_id
        or query.agent_id
        or (query.search or "").strip()
    )


class RedisNotificationStore(RedisBackend, NotificationStore):
    """Notification records on Redis (a RedisBackend)."""

    backend = "redis"
    default_key_prefix = DEFAULT_KEY_PREFIX
    error = StorageError
    label = "redis notification store"
    undecodable = (CacheError,)
    malformed = (KeyError, IndexError, TypeError, ValueError)  # a malformed member or entry

    # ------------------------------------------------------------ keys

    def _key(self, *parts: str) -> str:
        """A key in this store's namespace: key_prefix + "notifications:" + the parts."""
        return self.key("notifications", *parts)

    def _twin_keys(self, record: NotificationRecord) -> list[str]:
        keys = []
        for which, key in (("dedupe", record.dedupe_key), ("coalesce", record.coalesce_key)):
            if key is not None:
                scope = [record.thread_id, record.source, record.kind, record.agent_id, record.resource_id, which, key]
                digest = hashlib.sha256(json.dumps(scope, ensure_ascii=False).encode("utf-8", "surrogatepass"))
                keys.append(self._key("twins", digest.hexdigest()))
        return keys

    # ------------------------------------------------------------ helpers

    def _stage(self, pipe: Pipeline, old: _Entry | None, sequence: int, record: NotificationRecord) -> None:
        """Queues the writes that store `record` (replacing `old`) and move its index entries."""
        order_key = self._key("order", record.thread_id)
        new_order = _order_member(record, sequence)
        new_due = _due_member(record, sequence)
        if old is not None:
            old_sequence, old_record = old
            old_order = _order_member(old_record, old_sequence)
            if old_order != new_order:
                pipe.zrem(order_key, old_order)
            old_due = _due_member(old_record, old_sequence)
            if old_due is not None and old_due != new_due:
                pipe.zrem(self._key("due"), old_due)
            if old_record.status == "pending" and record.status != "pending":
                for twin_key in self._twin_keys(old_record):
                    pipe.srem(twin_key, old_record.id)
        pipe.hset(self._key("records", record.thread_id), record.id, _encode(sequence, record))
        pipe.zadd(order_key, {new_order: 0})
        if new_due is not None:
            pipe.zadd(self._key("due"), {new_due: 0})
        if record.status == "pending":
            for twin_key in self._twin_keys(record):
                pipe.sadd(twin_key, record.id)

    # ------------------------------------------------------------ records

    async def insert_or_coalesce(self, creation: Creation) -> NotificationRecord:
        fresh = creation.record
        records_key = self._key("records", fresh.thread_id)
        twin_keys = self._twin_keys(fresh)

        async def create(pipe: Pipeline) -> NotificationRecord:
            # The twin search and the write commit together, or the
            # records hash changed and the whole step is retried.
            await pipe.watch(records_key)
            twin: _Entry | None = None
            if twin_keys:
                candidates = sorted(text(i) for i in await pipe.sunion(twin_keys))
                raws = await pipe.hmget(records_key, candidates) if candidates else []
                twin = creation.twin(_decode(raw) for raw in raws if raw is not None)
            if twin is not None:
                sequence, record = twin[0], creation.coalesced(twin[1])
            else:
                record = fresh
                if await pipe.hexists(records_key, record.id):
                    raise NotificationExists(fresh.thread_id, record.id)
                sequence = int(await pipe.incr(self._key("sequence")))
            begin(pipe)
            self._stage(pipe, twin, sequence, record)
            await pipe.execute()
            return record

        with self.failures("create"):
            return await self.optimistic(f"create in thread {fresh.thread_id}", create)

    async def _get_entry(self, thread_id: str, id: str) -> _Entry | None:
        raw = await self.client.hget(self._key("records", thread_id), id)
        return None if raw is None else _decode(raw)

    async def get(self, thread_id: str, id: str) -> NotificationRecord | None:
        with self.failures("get"):
            entry = await self._get_entry(thread_id, id)
        return None if entry is None else entry[1]

    async def list_notifications(self, query: NotificationQuery) -> NotificationPage:
        position = query.validate()
        key = self._key("order", query.thread_id)
        records_key = self._key("records", query.thread_id)
        upper = "+" if position is None else f"({time_key(position[0])}:{sequence_key(position[1])}"
        # Matches wanted: the skipped ones, the page, and one more to tell whether there is a next page.
        need = None if query.limit is None else query.offset + query.limit + 1
        batch = BATCH if need is None or _filtered(query) else need
        matched: list[_Entry] = []
        with self.failures("list_notifications"):
            while need is None or len(matched) < need:
                members = [text(m) for m in await self.client.zrevrangebylex(key, upper, "-", start=0, num=batch)]
                if not members:
                    break
                parsed = [split_member(m) for m in members]
                raws = await self.client.hmget(records_key, [p[2] for p in parsed])
                for (updated, sequence, _), raw in zip(parsed, raws, strict=True):
                    if raw is None:  # gone since the range was read
                        continue
                    entry = _decode(raw)
                    if entry[0] != sequence or time_key(entry[1].updated_at) != updated:
                        continue  # changed since: it is listed at its new position
                    if matches_query(entry[1], query):
                        matched.append(entry)
                        if need is not None and len(matched) >= need:
                            break
                if len(members) < batch:
                    break
                upper = "(" + members[-1]
        return page_of(matched[query.offset :], query.limit)

    async def select_due(
        self, now: datetime, limit: int, agent_id: str | None, resource_id: str | None
    ) -> list[NotificationRecord]:
        lower = "-"
        upper = "(" + after_time(now)  # every due time <= now
        batch = BATCH if agent_id or resource_id else limit
        found: list[NotificationRecord] = []
        with self.failures("list_due"):
            while len(found) < limit:
                members = [
                    text(m) for m in await self.client.zrangebylex(self._key("due"), lower, upper, start=0, num=batch)
                ]
                if not members:
                    break
                parsed = [_split_due(m) for m in members]
                async with self.client.pipeline(transaction=False) as pipe:
                    for _, _, _, thread_id, notification_id in parsed:
                        pipe.hget(self._key("records", thread_id), notification_id)
                    raws = await pipe.execute()
                for member, (_, _, sequence, _, _), raw in zip(members, parsed, raws, strict=True):
                    if raw is None:
                        continue
                    entry = _decode(raw)
                    if entry[0] != sequence or _due_member(entry[1], sequence) != member:
                        continue  # changed since the range was read
                    record = entry[1]
                    if (not agent_id or record.agent_id == agent_id) and (
                        not resource_id or record.resource_id == resource_id
                    ):
                        found.append(record)
                        if len(found) >= limit:
                            break
                if len(members) < batch:
                    break
                lower = "(" + members[-1]
        return found

    async def rewrite(
        self, op: str, thread_id: str, ids: Sequence[str], change: Callable[[NotificationRecord], NotificationRecord]
    ) -> list[NotificationRecord | None]:
        # One transaction that watches the thread's records hash.
        records_key = self._key("records", thread_id)

        async def rewrite(pipe: Pipeline) -> list[NotificationRecord | None]:
            await pipe.watch(records_key)
            raws = await pipe.hmget(records_key, list(ids))
            olds = [None if raw is None else _decode(raw) for raw in raws]
            out: list[NotificationRecord | None] = [None if old is None else change(old[1]) for old in olds]
            if any(record is not None for record in out):
                begin(pipe)
                for old, record in zip(olds, out, strict=True):
                    if old is not None and record is not None:
                        self._stage(pipe, old, old[0], record)
                await pipe.execute()
            return out

        with self.failures(op):
            return await self.optimistic(f"{op} in thread {thread_id}", rewrite)

    async def clear(self) -> None:
        with self.failures("clear"):
            pattern = _glob_escape(self._key("")) + "*"
            keys = [k async for k in self.client.scan_iter(match=pattern, count=1000)]
            for start in range(0, len(keys), 1000):
                await self.client.unlink(*keys[start : start + 1000])
