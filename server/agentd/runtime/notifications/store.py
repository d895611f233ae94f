"""The "notifications" storage domain: the `NotificationStore` interface, its
errors, and `InMemoryNotificationStore` (SQLite and Redis live in
agentd.backends)."""

from __future__ import annotations

import copy
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from agentd.runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound
from agentd.runtime.lazy import lazy
from agentd.runtime.messages import as_of

if TYPE_CHECKING:
    from agentd.runtime.notifications import query as _query
    from agentd.runtime.notifications import record as _record
    from agentd.runtime.notifications.query import NotificationPage, NotificationQuery
    from agentd.runtime.notifications.record import NotificationInput, NotificationPatch, NotificationRecord, Status
else:
    # With the first record: a store made at start-up (every server makes one) loads neither.
    _query = lazy("agentd.runtime.notifications.query")
    _record = lazy("agentd.runtime.notifications.record")


def _naming(thread_id: str, notification_id: str, what: str, reason: str) -> tuple[str, str, dict[str, str]]:
    """An error's message, reason and metadata: they name the notification and its thread."""
    message = f"notification {notification_id!r} {what} thread {thread_id!r}"
    return message, reason, {"thread_id": thread_id, "notification_id": notification_id}


class NotificationNotFound(NotFound):
    def __init__(self, thread_id: str, notification_id: str) -> None:
        super().__init__(*_naming(thread_id, notification_id, "not found in", "NOTIFICATION_NOT_FOUND"))


class NotificationExists(AlreadyExists):
    def __init__(self, thread_id: str, notification_id: str) -> None:
        super().__init__(*_naming(thread_id, notification_id, "already exists in", "NOTIFICATION_ALREADY_EXISTS"))


def no_store() -> FailedPrecondition:
    return FailedPrecondition("notifications storage is not configured", "NOTIFICATIONS_UNAVAILABLE")


@dataclass(frozen=True)
class Creation:
    """One `create`, as `NotificationStore.insert_or_coalesce` stores it."""

    #: The validated input.
    value: NotificationInput
    #: The record to insert when no pending twin takes the input (its id random unless given).
    record: NotificationRecord
    now: datetime

    @property
    def keyed(self) -> bool:
        """Whether the input can coalesce at all (it has a dedupe or a coalesce key)."""
        return self.value.dedupe_key is not None or self.value.coalesce_key is not None

    def coalesces_into(self, record: NotificationRecord) -> bool:
        """`matches_coalesce` in the scope (thread, agent, resource) of the new record."""
        fresh = self.record
        return _record.matches_coalesce(
            record, self.value, thread_id=fresh.thread_id, resource_id=fresh.resource_id, agent_id=fresh.agent_id
        )

    def twin(self, entries: Iterable[tuple[int, NotificationRecord]]) -> tuple[int, NotificationRecord] | None:
        """Of (insertion sequence, record) entries, the newest (updated_at, then
        sequence) that the input coalesces into; None when there is none."""
        matching = [entry for entry in entries if self.coalesces_into(entry[1])]
        return max(matching, key=lambda entry: (entry[1].updated_at, entry[0])) if matching else None

    def coalesced(self, twin: NotificationRecord) -> NotificationRecord:
        """`twin` with the input merged in (`coalesce_record`)."""
        return _record.coalesce_record(twin, self.value, self.now)


class NotificationStore(ABC):
    """The "notifications" storage domain. Records are copied at the boundary:
    changing an input or a returned record never changes what is stored. The
    key is (thread_id, id): the same id may exist in two threads."""

    #: "memory", "sqlite" or "redis".
    backend: str = ""

    async def create(
        self,
        value: NotificationInput,
        *,
        thread_id: str,
        resource_id: str | None = None,
        agent_id: str | None = None,
        now: datetime | None = None,
        id: str | None = None,
    ) -> NotificationRecord:
        """Coalesces into a matching pending record (`matches_coalesce`), else
        creates one (a random id unless `id` is given; NotificationExists when taken)."""
        checked = _record.validate_input(value)
        if not thread_id:
            raise InvalidArgument.field("thread_id", "required")
        when = as_of(now)
        fresh = _record.new_record(
            checked,
            id=id or str(uuid.uuid4()),
            thread_id=thread_id,
            resource_id=resource_id,
            agent_id=agent_id,
            now=when,
        )
        return await self.insert_or_coalesce(Creation(checked, fresh, when))

    @abstractmethod
    async def insert_or_coalesce(self, creation: Creation) -> NotificationRecord:
        """`create` once the input is checked, as one atomic step: finds the
        newest pending twin (`Creation.twin`) and stores `creation.coalesced(twin)`
        over it; with no twin, inserts `creation.record` (NotificationExists
        when its (thread_id, id) is taken). Returns the stored record."""

    @abstractmethod
    async def get(self, thread_id: str, id: str) -> NotificationRecord | None: ...

    @abstractmethod
    async def list_notifications(self, query: NotificationQuery) -> NotificationPage:
        """Newest `updated_at` first (then newest inserted)."""

    async def list_due(
        self,
        now: datetime,
        *,
        limit: int = 100,
        agent_id: str | None = None,
        resource_id: str | None = None,
    ) -> list[NotificationRecord]:
        """Pending records with min(deliver_at, summary_at) <= now, by that
        time, then `updated_at`, then insertion."""
        limit = max(limit, 0)
        return await self.select_due(as_of(now), limit, agent_id, resource_id) if limit else []

    @abstractmethod
    async def select_due(
        self, now: datetime, limit: int, agent_id: str | None, resource_id: str | None
    ) -> list[NotificationRecord]:
        """`list_due`, once `now` is timezone-aware and `limit` positive."""

    async def update(
        self, thread_id: str, id: str, patch: NotificationPatch, *, now: datetime | None = None
    ) -> NotificationRecord:
        """NotificationNotFound for an unknown id."""
        when = as_of(now)
        (record,) = await self.rewrite("update", thread_id, [id], lambda old: _record.apply_patch(old, patch, when))
        if record is None:
            raise NotificationNotFound(thread_id, id)
        return record

    async def update_status(
        self, thread_id: str, ids: Sequence[str], status: Status, *, now: datetime | None = None
    ) -> list[NotificationRecord]:
        """Sets one status on many records (ids deduped, missing ones skipped);
        returns the updated records."""
        _record.check_status(status)
        when = as_of(now)
        unique = list(dict.fromkeys(ids))
        if not unique:
            return []
        patch = _record.NotificationPatch(status=status)
        done = await self.rewrite("update_status", thread_id, unique, lambda old: _record.apply_patch(old, patch, when))
        return [record for record in done if record is not None]

    async def mark_delivered(
        self, thread_id: str, id: str, *, delivered_signal_id: str, attempted_at: datetime
    ) -> NotificationRecord | None:
        """Records the signal id and attempt time; becomes delivered (with
        delivered_at) only if still pending. None for an unknown id."""
        when = as_of(attempted_at)
        (record,) = await self.rewrite(
            "mark_delivered", thread_id, [id], lambda old: _record.apply_delivered(old, delivered_signal_id, when)
        )
        return record

    @abstractmethod
    async def rewrite(
        self, op: str, thread_id: str, ids: Sequence[str], change: Callable[[NotificationRecord], NotificationRecord]
    ) -> list[NotificationRecord | None]:
        """As one atomic step, each of the thread's records `ids` (distinct)
        replaced by `change(record)`: the new records, None where an id does not
        exist. `op` names the caller's operation in errors."""

    @abstractmethod
    async def clear(self) -> None:
        """Deletes every record (tests and resets)."""

    async def open(self) -> None:  # noqa: B027 (optional)
        """Connects or prepares the backend (optional)."""

    async def close(self) -> None:  # noqa: B027 (optional)
        """Releases the backend (optional)."""


class InMemoryNotificationStore(NotificationStore):
    """For tests and single-process use: lost when the process exits. No method
    awaits while it reads and writes, so each one is atomic on the event loop."""

    backend = "memory"

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], tuple[int, NotificationRecord]] = {}
        self._sequence = 0

    async def insert_or_coalesce(self, creation: Creation) -> NotificationRecord:
        # No await between the twin search and the write: atomic on the event loop.
        record = creation.record
        twin = creation.twin(self._records.values())
        if twin is not None:
            sequence, existing = twin
            merged = creation.coalesced(existing)
            self._records[(existing.thread_id, existing.id)] = (sequence, merged)
            return copy.deepcopy(merged)
        if (record.thread_id, record.id) in self._records:
            raise NotificationExists(record.thread_id, record.id)
        self._sequence += 1
        self._records[(record.thread_id, record.id)] = (self._sequence, copy.deepcopy(record))
        return copy.deepcopy(record)

    async def get(self, thread_id: str, id: str) -> NotificationRecord | None:
        entry = self._records.get((thread_id, id))
        return copy.deepcopy(entry[1]) if entry else None

    async def list_notifications(self, query: NotificationQuery) -> NotificationPage:
        position = query.validate()
        rows = sorted(
            ((r.updated_at, seq, r) for seq, r in self._records.values() if _query.matches_query(r, query)),
            key=lambda row: (row[0], row[1]),
            reverse=True,
        )
        if position is not None:
            rows = [row for row in rows if (row[0], row[1]) < position]
        page = _query.page_of([(sequence, record) for _, sequence, record in rows[query.offset :]], query.limit)
        return _query.NotificationPage([copy.deepcopy(record) for record in page.records], page.next_cursor)

    async def select_due(
        self, now: datetime, limit: int, agent_id: str | None, resource_id: str | None
    ) -> list[NotificationRecord]:
        rows: list[tuple[datetime, datetime, int, NotificationRecord]] = []
        for sequence, record in self._records.values():
            when = _record.due_at(record)
            if (
                record.status == "pending"
                and when is not None
                and when <= now
                and (not agent_id or record.agent_id == agent_id)
                and (not resource_id or record.resource_id == resource_id)
            ):
                rows.append((when, record.updated_at, sequence, record))
        rows.sort(key=lambda row: (row[0], row[1], row[2]))
        return [copy.deepcopy(row[3]) for row in rows[:limit]]

    async def rewrite(
        self, op: str, thread_id: str, ids: Sequence[str], change: Callable[[NotificationRecord], NotificationRecord]
    ) -> list[NotificationRecord | None]:
        out: list[NotificationRecord | None] = []
        for notification_id in ids:
            entry = self._records.get((thread_id, notification_id))
            if entry is None:
                out.append(None)
                continue
            updated = change(entry[1])
            self._records[(thread_id, notification_id)] = (entry[0], updated)
            out.append(copy.deepcopy(updated))
        return out

    async def clear(self) -> None:
        self._records.clear()
