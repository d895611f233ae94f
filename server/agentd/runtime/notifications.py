"""Notifications: a per-thread inbox of records, the policy that decides when
each one reaches the model, and the dispatcher that sends what has come due.

    record    `NotificationRecord`, created (or coalesced into a pending twin)
              by `NotificationStore.create`.
    policy    `DeliveryPolicy.decide(record, thread_state, now)` answers a
              `DeliveryDecision`: deliver now, summarize (now or later), defer
              a full delivery, persist (inbox only), or discard.
    send      `Notifications.send` creates the record, decides, and routes a
              full `<notification>` or a one-record `<notification-summary>`.
    dispatch  `Notifications.dispatch_due` sends what became due: per thread,
              full deliveries and one summary, highest priority first.

Routing stays outside: `send`, `dispatch_due` and the inbox tool take a
`route` callback (and a `thread_state` callback) that the thread runtime
supplies, so this module runs and is tested alone. Time is always an argument
(`now`, or the service's injectable clock); nothing here sleeps.

Built-in policy (the original's, which wins over the spec's table: only high
priority emits an immediate summary on an active thread):

    priority  active thread                                  idle thread
    urgent    deliver (urgent)                               deliver (urgent)
    high      summary now, full delivery once idle           deliver (idle-high)
              (active-high-summary-then-full)
    medium    batched into a summary (active-batch-summary)  deliver (idle-medium)
    low       batched into a summary (active-batch-summary)  summary, persisted without
                                                             waking the model (idle-low-summary)
"""

from __future__ import annotations

import asyncio
import copy
import enum
import inspect
import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Final, Literal, Protocol, TypeAlias, cast, overload

from agentd.runtime.durations import parse_duration
from agentd.runtime.errors import AlreadyExists, FailedPrecondition, FieldViolation, InvalidArgument, NotFound
from agentd.runtime.messages import utcnow
from agentd.runtime.signals import JSON, Attributes, AttributesInput, Signal, create_signal, normalize_attributes
from agentd.runtime.tools import Tool, ToolContext

__all__ = [
    "DELIVERY_ACTIONS",
    "INBOX_TOOL_NAME",
    "MAX_DELIVERY_ATTEMPTS",
    "PRIORITIES",
    "PRIORITY_RANK",
    "STATUSES",
    "STATUS_STAMPS",
    "THREAD_STATES",
    "UNSET",
    "Decider",
    "DecisionInput",
    "DecisionLike",
    "DeliveryAction",
    "DeliveryDecision",
    "DeliveryPolicy",
    "DispatchFailure",
    "DispatchResult",
    "IdleBehavior",
    "InMemoryNotificationStore",
    "NotificationExists",
    "NotificationInbox",
    "NotificationInput",
    "NotificationNotFound",
    "NotificationPage",
    "NotificationPatch",
    "NotificationQuery",
    "NotificationRecord",
    "NotificationStore",
    "NotificationSummary",
    "Notifications",
    "PolicyRule",
    "Priority",
    "Route",
    "RouteAction",
    "RouteResult",
    "SendResult",
    "Status",
    "ThreadState",
    "ThreadStateFn",
    "apply_patch",
    "coalesce_record",
    "create_notification_inbox_tool",
    "decode_cursor",
    "default_decision",
    "due_at",
    "encode_cursor",
    "matches_coalesce",
    "matches_query",
    "new_record",
    "notification_signal",
    "parse_duration",
    "summarize_records",
    "summary_signal",
    "validate_input",
]

Priority = Literal["low", "medium", "high", "urgent"]
Status = Literal["pending", "delivered", "seen", "dismissed", "archived", "discarded", "failed"]
DeliveryAction = Literal["deliver", "queue", "defer", "summarize", "persist", "discard"]
ThreadState = Literal["active", "idle"]
IdleBehavior = Literal["wake", "persist"]
#: What the router did with a signal ("blocked": the thread is held by a suspended run).
RouteAction = Literal["wake", "deliver", "persist", "discard", "blocked"]

PRIORITIES: tuple[Priority, ...] = ("low", "medium", "high", "urgent")
STATUSES: tuple[Status, ...] = ("pending", "delivered", "seen", "dismissed", "archived", "discarded", "failed")
DELIVERY_ACTIONS: tuple[DeliveryAction, ...] = ("deliver", "queue", "defer", "summarize", "persist", "discard")
THREAD_STATES: tuple[ThreadState, ...] = ("active", "idle")
#: Dispatch order: urgent first.
PRIORITY_RANK: dict[str, int] = {"urgent": 0, "high": 1, "medium": 2, "low": 3}
#: A record whose delivery failed this many times becomes `failed` (no longer due).
MAX_DELIVERY_ATTEMPTS = 5
#: Statuses whose change stamps a time field.
STATUS_STAMPS: dict[str, str] = {
    "delivered": "delivered_at",
    "seen": "seen_at",
    "dismissed": "dismissed_at",
    "archived": "archived_at",
    "discarded": "discarded_at",
}
INBOX_TOOL_NAME = "notification-inbox"
NO_PENDING_TEXT = "No pending notifications."


class _Unset(enum.Enum):
    UNSET = "UNSET"


#: "Leave this field as it is" in a NotificationPatch (None means "clear it").
UNSET: Final = _Unset.UNSET


# ---------------------------------------------------------------- errors


class NotificationNotFound(NotFound):
    def __init__(self, thread_id: str, notification_id: str) -> None:
        super().__init__(
            f"notification {notification_id!r} not found in thread {thread_id!r}",
            "NOTIFICATION_NOT_FOUND",
            {"thread_id": thread_id, "notification_id": notification_id},
        )


class NotificationExists(AlreadyExists):
    def __init__(self, thread_id: str, notification_id: str) -> None:
        super().__init__(
            f"notification {notification_id!r} already exists in thread {thread_id!r}",
            "NOTIFICATION_ALREADY_EXISTS",
            {"thread_id": thread_id, "notification_id": notification_id},
        )


def _no_store() -> FailedPrecondition:
    return FailedPrecondition("notifications storage is not configured", "NOTIFICATIONS_UNAVAILABLE")


# ---------------------------------------------------------------- record


@dataclass
class NotificationRecord:
    """One inbox record. Times are timezone-aware; `payload` is never shown to the model."""

    id: str
    #: The primary scope: (thread_id, id) is the key.
    thread_id: str
    source: str
    kind: str
    #: What the model reads.
    summary: str
    priority: Priority = "medium"
    status: Status = "pending"
    payload: JSON = None
    resource_id: str | None = None
    agent_id: str | None = None
    source_id: str | None = None
    dedupe_key: str | None = None
    coalesce_key: str | None = None
    coalesced_count: int = 1
    #: Ordered (name, value) pairs, copied onto the emitted signal.
    attributes: Attributes = ()
    metadata: dict[str, JSON] | None = None
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    delivered_at: datetime | None = None
    seen_at: datetime | None = None
    dismissed_at: datetime | None = None
    archived_at: datetime | None = None
    discarded_at: datetime | None = None
    #: When a full delivery is due.
    deliver_at: datetime | None = None
    #: When a summary covering this record is due.
    summary_at: datetime | None = None
    delivery_reason: str | None = None
    delivery_attempts: int = 0
    last_delivery_attempt_at: datetime | None = None
    last_delivery_error: str | None = None
    delivered_signal_id: str | None = None
    summary_signal_id: str | None = None


@dataclass
class NotificationInput:
    """What a producer sends. Empty keys count as absent (protobuf cannot tell them apart)."""

    source: str
    kind: str
    summary: str
    #: None: medium on creation, and a coalesced record keeps its priority.
    priority: Priority | None = None
    payload: JSON = None
    source_id: str | None = None
    dedupe_key: str | None = None
    coalesce_key: str | None = None
    attributes: AttributesInput = None
    metadata: dict[str, JSON] | None = None


@dataclass(frozen=True)
class NotificationPatch:
    """Fields to change; UNSET leaves a field alone, None clears an optional one.
    A status change stamps its time field (delivered_at, seen_at, ...) unless the
    patch sets that field too."""

    status: Status | _Unset = UNSET
    summary: str | _Unset = UNSET
    priority: Priority | _Unset = UNSET
    payload: JSON | _Unset = UNSET
    attributes: AttributesInput | _Unset = UNSET
    metadata: dict[str, JSON] | _Unset | None = UNSET
    deliver_at: datetime | _Unset | None = UNSET
    summary_at: datetime | _Unset | None = UNSET
    delivered_at: datetime | _Unset | None = UNSET
    seen_at: datetime | _Unset | None = UNSET
    dismissed_at: datetime | _Unset | None = UNSET
    archived_at: datetime | _Unset | None = UNSET
    discarded_at: datetime | _Unset | None = UNSET
    delivery_reason: str | _Unset | None = UNSET
    delivery_attempts: int | _Unset = UNSET
    last_delivery_attempt_at: datetime | _Unset | None = UNSET
    last_delivery_error: str | _Unset | None = UNSET
    delivered_signal_id: str | _Unset | None = UNSET
    summary_signal_id: str | _Unset | None = UNSET


_PATCH_TIMES = frozenset(
    {
        "deliver_at",
        "summary_at",
        "delivered_at",
        "seen_at",
        "dismissed_at",
        "archived_at",
        "discarded_at",
        "last_delivery_attempt_at",
    }
)
_PATCH_FIELDS = tuple(NotificationPatch.__dataclass_fields__)


def _aware(when: datetime) -> datetime:
    """Timezone-aware (a naive time is taken as UTC)."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def as_of(now: datetime | None) -> datetime:
    """A store method's `now`: the given time made aware, or the current time."""
    return _aware(now) if now is not None else utcnow()


def checked_input(value: NotificationInput, thread_id: str) -> NotificationInput:
    """What every store's `create` validates before anything else."""
    checked = validate_input(value)
    if not thread_id:
        raise InvalidArgument.field("thread_id", "required")
    return checked


def _opt(value: str | None) -> str | None:
    return value or None


def _is_json(value: JSON) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def _check_priority(value: object, name: str = "priority") -> Priority:
    if value not in PRIORITIES:
        raise InvalidArgument.field(name, f"{value!r} is not one of {', '.join(PRIORITIES)}")
    return value


def _check_status(value: object, name: str = "status") -> Status:
    if value not in STATUSES:
        raise InvalidArgument.field(name, f"{value!r} is not one of {', '.join(STATUSES)}")
    return value


def _check_state(value: object) -> ThreadState:
    if value not in THREAD_STATES:
        raise ValueError(f"thread state {value!r} is not active or idle")
    return value


def validate_input(value: NotificationInput, *, path: str = "notification") -> NotificationInput:
    """A normalised copy (attributes as ordered pairs, empty keys as None);
    every problem is reported in one InvalidArgument."""
    violations: list[FieldViolation] = []
    for name in ("source", "kind", "summary"):
        text = getattr(value, name)
        if not isinstance(text, str) or not text.strip():
            violations.append(FieldViolation(f"{path}.{name}", "required"))
    if value.priority is not None and value.priority not in PRIORITIES:
        violations.append(
            FieldViolation(f"{path}.priority", f"{value.priority!r} is not one of {', '.join(PRIORITIES)}")
        )
    attributes: Attributes = ()
    try:
        attributes = normalize_attributes(value.attributes, path=f"{path}.attributes")
    except InvalidArgument as exc:
        violations.extend(exc.violations)
    if value.metadata is not None and not (isinstance(value.metadata, dict) and _is_json(value.metadata)):
        violations.append(FieldViolation(f"{path}.metadata", "must be a JSON object"))
    if not _is_json(value.payload):
        violations.append(FieldViolation(f"{path}.payload", "must be a JSON value"))
    for name in ("source_id", "dedupe_key", "coalesce_key"):
        key = getattr(value, name)
        if key is not None and not isinstance(key, str):
            violations.append(FieldViolation(f"{path}.{name}", "must be a string"))
    if violations:
        raise InvalidArgument.fields(violations)
    return NotificationInput(
        source=value.source,
        kind=value.kind,
        summary=value.summary,
        priority=value.priority,
        payload=copy.deepcopy(value.payload),
        source_id=_opt(value.source_id),
        dedupe_key=_opt(value.dedupe_key),
        coalesce_key=_opt(value.coalesce_key),
        attributes=copy.deepcopy(attributes),
        metadata=copy.deepcopy(value.metadata) if value.metadata else None,
    )


def new_record(
    value: NotificationInput,
    *,
    id: str,
    thread_id: str,
    resource_id: str | None,
    agent_id: str | None,
    now: datetime,
) -> NotificationRecord:
    """A fresh pending record from a validated input."""
    return NotificationRecord(
        id=id,
        thread_id=thread_id,
        source=value.source,
        kind=value.kind,
        summary=value.summary,
        priority=value.priority or "medium",
        payload=copy.deepcopy(value.payload),
        resource_id=_opt(resource_id),
        agent_id=_opt(agent_id),
        source_id=value.source_id,
        dedupe_key=value.dedupe_key,
        coalesce_key=value.coalesce_key,
        attributes=copy.deepcopy(normalize_attributes(value.attributes)),
        metadata=copy.deepcopy(value.metadata) if value.metadata else None,
        created_at=now,
        updated_at=now,
    )


def matches_coalesce(
    record: NotificationRecord,
    value: NotificationInput,
    *,
    thread_id: str,
    resource_id: str | None,
    agent_id: str | None,
) -> bool:
    """Whether `value` merges into `record`: a pending record of the same
    thread, source, kind, agent and resource, with an equal dedupe or coalesce key."""
    if record.status != "pending" or (value.dedupe_key is None and value.coalesce_key is None):
        return False
    same_scope = (
        record.thread_id == thread_id
        and record.source == value.source
        and record.kind == value.kind
        and record.agent_id == _opt(agent_id)
        and record.resource_id == _opt(resource_id)
    )
    same_key = (value.dedupe_key is not None and record.dedupe_key == value.dedupe_key) or (
        value.coalesce_key is not None and record.coalesce_key == value.coalesce_key
    )
    return same_scope and same_key


def coalesce_record(existing: NotificationRecord, value: NotificationInput, now: datetime) -> NotificationRecord:
    """`existing` updated in place by a duplicate: summary replaced, payload and
    priority replaced when given, attributes and metadata shallow-merged, one
    more coalesced; same id, same status."""
    attributes = dict(existing.attributes)
    attributes.update(normalize_attributes(value.attributes))
    metadata = existing.metadata
    if value.metadata:
        metadata = {**(existing.metadata or {}), **copy.deepcopy(value.metadata)}
    return replace(
        copy.deepcopy(existing),
        summary=value.summary,
        payload=copy.deepcopy(value.payload) if value.payload is not None else copy.deepcopy(existing.payload),
        priority=value.priority or existing.priority,
        attributes=copy.deepcopy(tuple(attributes.items())),
        metadata=copy.deepcopy(metadata),
        coalesced_count=existing.coalesced_count + 1,
        updated_at=now,
    )


def apply_patch(record: NotificationRecord, patch: NotificationPatch, now: datetime) -> NotificationRecord:
    """`record` with `patch` applied and `updated_at` = now (a new object)."""
    changes: dict[str, Any] = {}
    for name in _PATCH_FIELDS:
        value = getattr(patch, name)
        if value is UNSET:
            continue
        if name == "status":
            value = _check_status(value)
        elif name == "priority":
            value = _check_priority(value)
        elif name == "attributes":
            value = normalize_attributes(value)
        elif name in _PATCH_TIMES and value is not None:
            value = _aware(value)
        changes[name] = copy.deepcopy(value)
    status = changes.get("status")
    if status is not None and status != record.status:
        stamp = STATUS_STAMPS.get(status)
        if stamp is not None and stamp not in changes:
            changes[stamp] = now
    changes["updated_at"] = now
    return replace(copy.deepcopy(record), **changes)


def apply_delivered(record: NotificationRecord, signal_id: str, attempted_at: datetime) -> NotificationRecord:
    """Always records the signal and the attempt; becomes delivered only when still pending."""
    changes: dict[str, Any] = {
        "delivered_signal_id": signal_id,
        "last_delivery_attempt_at": attempted_at,
        "updated_at": attempted_at,
    }
    if record.status == "pending":
        changes["status"] = "delivered"
        changes["delivered_at"] = attempted_at
    return replace(copy.deepcopy(record), **changes)


def due_at(record: NotificationRecord) -> datetime | None:
    """The earliest of deliver_at and summary_at (None when neither is set)."""
    times = [t for t in (record.deliver_at, record.summary_at) if t is not None]
    return min(times) if times else None


# ---------------------------------------------------------------- queries


@dataclass(frozen=True)
class NotificationQuery:
    """A thread's records, newest `updated_at` first. Empty filters match everything."""

    thread_id: str
    status: Status | Sequence[Status] | None = None
    priority: Priority | Sequence[Priority] | None = None
    source: str | None = None
    resource_id: str | None = None
    agent_id: str | None = None
    #: Case-insensitive substring of summary, kind or source.
    search: str | None = None
    #: At most this many records (None: all).
    limit: int | None = None
    #: Skip this many matches (after the cursor's position).
    offset: int = 0
    #: Opaque `NotificationPage.next_cursor` of the previous page.
    cursor: str | None = None

    def statuses(self) -> frozenset[str]:
        values = (self.status,) if isinstance(self.status, str) else tuple(self.status or ())
        return frozenset(_check_status(v) for v in values)

    def priorities(self) -> frozenset[str]:
        values = (self.priority,) if isinstance(self.priority, str) else tuple(self.priority or ())
        return frozenset(_check_priority(v) for v in values)

    def validate(self) -> tuple[datetime, int] | None:
        """Checks the query; returns the decoded cursor position."""
        self.statuses()
        self.priorities()
        if self.limit is not None and self.limit < 0:
            raise InvalidArgument.field("limit", "must not be negative")
        if self.offset < 0:
            raise InvalidArgument.field("offset", "must not be negative")
        return None if self.cursor is None else decode_cursor(self.cursor)


@dataclass
class NotificationPage:
    records: list[NotificationRecord]
    #: None on the last page.
    next_cursor: str | None = None


def encode_cursor(updated_at: datetime, sequence: int) -> str:
    return f"{_aware(updated_at).isoformat()}|{sequence}"


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    """(updated_at, insertion sequence); InvalidArgument for anything else."""
    when, sep, sequence = cursor.rpartition("|")
    try:
        if not sep:
            raise ValueError(cursor)
        return _aware(datetime.fromisoformat(when)), int(sequence)
    except ValueError:
        raise InvalidArgument.field("cursor", "not a cursor from a previous page") from None


def _contains(haystack: str | None, needle: str) -> bool:
    return haystack is not None and needle.lower() in haystack.lower()


def matches_query(record: NotificationRecord, query: NotificationQuery) -> bool:
    """Every filter of `query` except the cursor, offset and limit."""
    statuses, priorities = query.statuses(), query.priorities()
    search = (query.search or "").strip()
    return (
        record.thread_id == query.thread_id
        and (not statuses or record.status in statuses)
        and (not priorities or record.priority in priorities)
        and (not query.source or record.source == query.source)
        and (not query.resource_id or record.resource_id == query.resource_id)
        and (not query.agent_id or record.agent_id == query.agent_id)
        and (not search or any(_contains(t, search) for t in (record.summary, record.kind, record.source)))
    )


# ---------------------------------------------------------------- storage


class NotificationStore(ABC):
    """The "notifications" storage domain. Records are copied at the boundary:
    changing an input or a returned record never changes what is stored. The
    key is (thread_id, id): the same id may exist in two threads."""

    #: "memory" or "sqlite".
    backend: str = ""

    @abstractmethod
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

    @abstractmethod
    async def get(self, thread_id: str, id: str) -> NotificationRecord | None: ...

    @abstractmethod
    async def list_notifications(self, query: NotificationQuery) -> NotificationPage:
        """Newest `updated_at` first (then newest inserted)."""

    @abstractmethod
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

    @abstractmethod
    async def update(
        self, thread_id: str, id: str, patch: NotificationPatch, *, now: datetime | None = None
    ) -> NotificationRecord:
        """NotificationNotFound for an unknown id."""

    async def update_status(
        self, thread_id: str, ids: Sequence[str], status: Status, *, now: datetime | None = None
    ) -> list[NotificationRecord]:
        """Sets one status on many records (ids deduped, missing ones skipped);
        returns the updated records. This fallback issues single updates, at
        most 20 at a time; backends with a bulk write override it."""
        _check_status(status)
        when = as_of(now)
        limiter = asyncio.Semaphore(20)

        async def one(notification_id: str) -> NotificationRecord | None:
            async with limiter:
                try:
                    return await self.update(thread_id, notification_id, NotificationPatch(status=status), now=when)
                except NotificationNotFound:
                    return None

        done = await asyncio.gather(*(one(i) for i in dict.fromkeys(ids)))
        return [r for r in done if r is not None]

    @abstractmethod
    async def mark_delivered(
        self, thread_id: str, id: str, *, delivered_signal_id: str, attempted_at: datetime
    ) -> NotificationRecord | None:
        """Records the signal id and attempt time; becomes delivered (with
        delivered_at) only if still pending. None for an unknown id."""

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
        checked = checked_input(value, thread_id)
        when = as_of(now)
        twins = [
            (record.updated_at, sequence, record)
            for sequence, record in self._records.values()
            if matches_coalesce(record, checked, thread_id=thread_id, resource_id=resource_id, agent_id=agent_id)
        ]
        if twins:
            _, sequence, existing = max(twins, key=lambda t: (t[0], t[1]))
            merged = coalesce_record(existing, checked, when)
            self._records[(thread_id, existing.id)] = (sequence, merged)
            return copy.deepcopy(merged)
        record = new_record(
            checked,
            id=id or _new_id(),
            thread_id=thread_id,
            resource_id=resource_id,
            agent_id=agent_id,
            now=when,
        )
        if (thread_id, record.id) in self._records:
            raise NotificationExists(thread_id, record.id)
        self._sequence += 1
        self._records[(thread_id, record.id)] = (self._sequence, record)
        return copy.deepcopy(record)

    async def get(self, thread_id: str, id: str) -> NotificationRecord | None:
        entry = self._records.get((thread_id, id))
        return copy.deepcopy(entry[1]) if entry else None

    async def list_notifications(self, query: NotificationQuery) -> NotificationPage:
        position = query.validate()
        rows = sorted(
            ((r.updated_at, seq, r) for seq, r in self._records.values() if matches_query(r, query)),
            key=lambda row: (row[0], row[1]),
            reverse=True,
        )
        if position is not None:
            rows = [row for row in rows if (row[0], row[1]) < position]
        rows = rows[query.offset :]
        page = rows if query.limit is None else rows[: query.limit]
        more = len(page) < len(rows)
        cursor = encode_cursor(page[-1][0], page[-1][1]) if more and page else None
        return NotificationPage([copy.deepcopy(row[2]) for row in page], cursor)

    async def list_due(
        self,
        now: datetime,
        *,
        limit: int = 100,
        agent_id: str | None = None,
        resource_id: str | None = None,
    ) -> list[NotificationRecord]:
        now = _aware(now)
        rows: list[tuple[datetime, datetime, int, NotificationRecord]] = []
        for sequence, record in self._records.values():
            when = due_at(record)
            if (
                record.status == "pending"
                and when is not None
                and when <= now
                and (not agent_id or record.agent_id == agent_id)
                and (not resource_id or record.resource_id == resource_id)
            ):
                rows.append((when, record.updated_at, sequence, record))
        rows.sort(key=lambda row: (row[0], row[1], row[2]))
        return [copy.deepcopy(row[3]) for row in rows[: max(limit, 0)]]

    async def update(
        self, thread_id: str, id: str, patch: NotificationPatch, *, now: datetime | None = None
    ) -> NotificationRecord:
        entry = self._records.get((thread_id, id))
        if entry is None:
            raise NotificationNotFound(thread_id, id)
        updated = apply_patch(entry[1], patch, as_of(now))
        self._records[(thread_id, id)] = (entry[0], updated)
        return copy.deepcopy(updated)

    async def update_status(
        self, thread_id: str, ids: Sequence[str], status: Status, *, now: datetime | None = None
    ) -> list[NotificationRecord]:
        _check_status(status)
        when = as_of(now)
        out = []
        for notification_id in dict.fromkeys(ids):
            entry = self._records.get((thread_id, notification_id))
            if entry is None:
                continue
            updated = apply_patch(entry[1], NotificationPatch(status=status), when)
            self._records[(thread_id, notification_id)] = (entry[0], updated)
            out.append(copy.deepcopy(updated))
        return out

    async def mark_delivered(
        self, thread_id: str, id: str, *, delivered_signal_id: str, attempted_at: datetime
    ) -> NotificationRecord | None:
        entry = self._records.get((thread_id, id))
        if entry is None:
            return None
        updated = apply_delivered(entry[1], delivered_signal_id, _aware(attempted_at))
        self._records[(thread_id, id)] = (entry[0], updated)
        return copy.deepcopy(updated)

    async def clear(self) -> None:
        self._records.clear()


def _new_id() -> str:
    return str(uuid.uuid4())


# ---------------------------------------------------------------- delivery policy


@dataclass(frozen=True)
class DeliveryDecision:
    action: DeliveryAction
    #: When a full delivery is due (defer; high-active summary-then-full).
    deliver_at: datetime | None = None
    #: When a summary is due (summarize).
    summary_at: datetime | None = None
    #: E.g. "urgent", "idle-high", "active-batch-summary"; stored as delivery_reason.
    reason: str | None = None
    #: Execution options for a run a delivery wakes (opaque here).
    stream_options: Any = None
    #: At dispatch time: leave the record pending without counting an attempt.
    hold: bool = False


@dataclass(frozen=True)
class DecisionInput:
    """What `decide()` receives."""

    record: NotificationRecord
    thread_state: ThreadState
    now: datetime


#: A decision as a policy may write it: an action name, a DeliveryDecision, or
#: a mapping {action, deliver_at?, summary_at?, after?, reason?, stream_options?, hold?}
#: (`after`, a timedelta or "30m", sets summary_at (summarize) or deliver_at (defer) to now + after).
DecisionLike: TypeAlias = DeliveryDecision | str | Mapping[str, Any]
#: `decide(DecisionInput)`, sync or async; None (or any falsy answer) falls through to the tables.
Decider: TypeAlias = Callable[[DecisionInput], DecisionLike | Awaitable[DecisionLike | None] | None]

def _check_action(value: object, where: str) -> DeliveryAction:
    if value not in DELIVERY_ACTIONS:
        raise ValueError(f"{where}: {value!r} is not one of {', '.join(DELIVERY_ACTIONS)}")
    return value


@dataclass(frozen=True)
class _Entry:
    """A configured decision: `after` is relative to the time of each decision."""

    action: DeliveryAction
    after: timedelta | None = None
    reason: str | None = None
    deliver_at: datetime | None = None
    summary_at: datetime | None = None
    stream_options: Any = None
    hold: bool = False

    def resolve(self, now: datetime) -> DeliveryDecision:
        deliver_at, summary_at = self.deliver_at, self.summary_at
        if self.after is not None:
            if self.action == "summarize":
                summary_at = now + self.after
            else:
                deliver_at = now + self.after
        return DeliveryDecision(self.action, deliver_at, summary_at, self.reason, self.stream_options, self.hold)


_DECISION_KEYS = frozenset({"action", "after", "reason", "deliver_at", "summary_at", "stream_options", "hold"})


def _entry(value: object, where: str) -> _Entry:
    if isinstance(value, _Entry):
        return value
    if isinstance(value, str):
        return _Entry(_check_action(value, where))
    if isinstance(value, DeliveryDecision):
        return _Entry(
            _check_action(value.action, f"{where}.action"),
            None,
            value.reason,
            value.deliver_at,
            value.summary_at,
            value.stream_options,
            value.hold,
        )
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - _DECISION_KEYS)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}")
        if "action" not in value:
            raise ValueError(f"{where}: action is required")
        action = _check_action(value["action"], f"{where}.action")
        after = None
        if value.get("after") is not None:
            if action not in ("summarize", "defer"):
                raise ValueError(f"{where}.after: only summarize and defer take a delay")
            try:
                after = parse_duration(value["after"])
            except ValueError as exc:
                raise ValueError(f"{where}.after: {exc}") from None
        times = {}
        for name in ("deliver_at", "summary_at"):
            when = value.get(name)
            if when is not None and not isinstance(when, datetime):
                raise ValueError(f"{where}.{name}: must be a datetime")
            times[name] = _aware(when) if when is not None else None
        reason = value.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise ValueError(f"{where}.reason: must be a string")
        return _Entry(
            action,
            after,
            reason,
            times["deliver_at"],
            times["summary_at"],
            value.get("stream_options"),
            bool(value.get("hold", False)),
        )
    raise ValueError(f"{where}: an action name, a DeliveryDecision or a mapping with an action")


_MATCH_KEYS = ("priority", "source", "kind", "thread_state")


@dataclass(frozen=True)
class PolicyRule:
    """First matching rule wins. `match` keys: priority, source, kind,
    thread_state; a value is one string or a list of accepted strings; an empty
    match matches everything. `after` sets summary_at (summarize) or deliver_at
    (defer) to now + after."""

    match: Mapping[str, str | Sequence[str]]
    action: DeliveryAction
    after: timedelta | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        where = "rule"
        unknown = sorted(set(self.match) - set(_MATCH_KEYS))
        if unknown:
            raise ValueError(f"{where}.match: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(_MATCH_KEYS)})")
        for key, wanted in self.match.items():
            values = (wanted,) if isinstance(wanted, str) else tuple(wanted)
            if not values or not all(isinstance(v, str) for v in values):
                raise ValueError(f"{where}.match.{key}: a string or a non-empty list of strings")
            allowed = PRIORITIES if key == "priority" else THREAD_STATES if key == "thread_state" else None
            bad = [v for v in values if allowed is not None and v not in allowed]
            if bad:
                raise ValueError(f"{where}.match.{key}: {bad[0]!r} is not one of {', '.join(allowed or ())}")
        _check_action(self.action, f"{where}.action")
        if self.after is not None and self.action not in ("summarize", "defer"):
            raise ValueError(f"{where}.after: only summarize and defer take a delay")

    def matches(self, record: NotificationRecord, thread_state: ThreadState) -> bool:
        actual = {
            "priority": record.priority,
            "source": record.source,
            "kind": record.kind,
            "thread_state": thread_state,
        }
        for key, wanted in self.match.items():
            values = (wanted,) if isinstance(wanted, str) else tuple(wanted)
            if actual[key] not in values:
                return False
        return True

    def entry(self) -> _Entry:
        return _Entry(self.action, self.after, self.reason)


def default_decision(record: NotificationRecord, thread_state: ThreadState, now: datetime) -> DeliveryDecision:
    """The built-in table (see the module docstring)."""
    priority = record.priority
    if priority == "urgent":
        return DeliveryDecision("deliver", reason="urgent")
    if thread_state == "idle":
        if priority == "low":
            return DeliveryDecision("summarize", summary_at=now, reason="idle-low-summary")
        return DeliveryDecision("deliver", reason=f"idle-{priority}")
    if priority == "high":
        return DeliveryDecision("summarize", deliver_at=now, summary_at=now, reason="active-high-summary-then-full")
    return DeliveryDecision("summarize", summary_at=now, reason="active-batch-summary")


class DeliveryPolicy:
    """Decides each record. Resolution order: `decide()` (when it returns a
    decision) → `sources[record.source]` → `priorities[record.priority]` →
    the first matching `rules` entry → `default` → the built-in table.

    A summarize without summary_at summarises now; a defer without deliver_at
    is due now (the dispatcher's next pass)."""

    def __init__(
        self,
        default: DecisionLike | None = None,
        priorities: Mapping[str, DecisionLike] | None = None,
        sources: Mapping[str, DecisionLike] | None = None,
        rules: Sequence[PolicyRule] = (),
        decide: Decider | None = None,
    ) -> None:
        self.default = None if default is None else _entry(default, "default")
        self.priorities: dict[str, _Entry] = {}
        for key, value in (priorities or {}).items():
            if key not in PRIORITIES:
                raise ValueError(f"priorities.{key}: not a priority (use {', '.join(PRIORITIES)})")
            self.priorities[key] = _entry(value, f"priorities.{key}")
        # A plain dict copy: only the caller's own keys ever match (no
        # "constructor" or "__class__" through inheritance).
        self.sources: dict[str, _Entry] = {str(k): _entry(v, f"sources.{k}") for k, v in (sources or {}).items()}
        self.rules: tuple[PolicyRule, ...] = tuple(rules)
        for i, rule in enumerate(self.rules):
            if not isinstance(rule, PolicyRule):
                raise ValueError(f"rules[{i}]: must be a PolicyRule")
        self._decide = decide

    async def decide(self, record: NotificationRecord, thread_state: ThreadState, now: datetime) -> DeliveryDecision:
        state = _check_state(thread_state)
        now = _aware(now)
        decision: DeliveryDecision | None = None
        if self._decide is not None:
            answer: Any = self._decide(DecisionInput(copy.deepcopy(record), state, now))
            if inspect.isawaitable(answer):
                answer = await answer
            if answer:
                decision = _entry(answer, "decide()").resolve(now)
        if decision is None:
            entry = self.sources.get(record.source) or self.priorities.get(record.priority)
            if entry is None:
                entry = next((rule.entry() for rule in self.rules if rule.matches(record, state)), None)
            entry = entry or self.default
            decision = entry.resolve(now) if entry is not None else default_decision(record, state, now)
        if decision.action == "summarize" and decision.summary_at is None:
            decision = replace(decision, summary_at=now)
        elif decision.action == "defer" and decision.deliver_at is None:
            decision = replace(decision, deliver_at=now)
        return decision

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> DeliveryPolicy:
        """The agentd.toml form (ValueError names the offending key):

        [agents.support.notifications.delivery_policy]
        default = "deliver"
        priorities = { urgent = "deliver", low = { action = "summarize", after = "30m" } }
        sources = { ci = "defer" }
        rules = [ { match = { priority = "low", thread_state = "active" }, action = "summarize", after = "30m" } ]
        """
        if not isinstance(config, Mapping):
            raise ValueError("delivery_policy: must be a table")
        unknown = sorted(set(config) - {"default", "priorities", "sources", "rules"})
        if unknown:
            raise ValueError(
                f"delivery_policy: unknown key(s) {', '.join(map(str, unknown))} "
                "(allowed: default, priorities, rules, sources)"
            )
        tables = {}
        for name in ("priorities", "sources"):
            table = config.get(name) or {}
            if not isinstance(table, Mapping):
                raise ValueError(f"{name}: must be a table")
            tables[name] = {k: _config_entry(v, f"{name}.{k}") for k, v in table.items()}
        for key in tables["priorities"]:
            if key not in PRIORITIES:
                raise ValueError(f"priorities.{key}: not a priority (use {', '.join(PRIORITIES)})")
        raw_rules = config.get("rules") or []
        if not isinstance(raw_rules, Sequence) or isinstance(raw_rules, str):
            raise ValueError("rules: must be a list of tables")
        rules = []
        for i, raw in enumerate(raw_rules):
            where = f"rules[{i}]"
            if not isinstance(raw, Mapping):
                raise ValueError(f"{where}: must be a table with match, action and optional after, reason")
            extra = sorted(set(raw) - {"match", "action", "after", "reason"})
            if extra:
                raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, extra))}")
            match = raw.get("match") or {}
            if not isinstance(match, Mapping):
                raise ValueError(f"{where}.match: must be a table")
            entry = _config_entry({k: v for k, v in raw.items() if k != "match"}, where)
            try:
                rules.append(PolicyRule(dict(match), entry.action, entry.after, entry.reason))
            except ValueError as exc:
                raise ValueError(str(exc).replace("rule", where, 1)) from None
        default = config.get("default")
        policy = cls(rules=rules)
        policy.default = None if default is None else _config_entry(default, "default")
        policy.priorities = tables["priorities"]
        policy.sources = tables["sources"]
        return policy


def _config_entry(value: object, where: str) -> _Entry:
    if isinstance(value, Mapping):
        extra = sorted(set(value) - {"action", "after", "reason"})
        if extra:
            raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, extra))} (allowed: action, after, reason)")
    elif not isinstance(value, str):
        raise ValueError(f"{where}: an action name or a table with action (and optional after, reason)")
    return _entry(value, where)


# ---------------------------------------------------------------- rendering


def _iso(when: datetime) -> str:
    return _aware(when).astimezone(UTC).isoformat().replace("+00:00", "Z")


def notification_signal(record: NotificationRecord, *, now: datetime | None = None, id: str | None = None) -> Signal:
    """The full `<notification>` signal: contents = summary; attributes = the
    record's, overlaid with id, source, type (= kind), kind, priority, status
    and coalescedCount (only when > 1)."""
    attributes: dict[str, JSON] = dict(record.attributes)
    attributes.update(
        id=record.id,
        source=record.source,
        type=record.kind,
        kind=record.kind,
        priority=record.priority,
        status=record.status,
    )
    if record.coalesced_count > 1:
        attributes["coalescedCount"] = record.coalesced_count
    info: dict[str, JSON] = {
        "signal": "notification",
        "recordId": record.id,
        "source": record.source,
        "kind": record.kind,
        "priority": record.priority,
        "status": record.status,
        "coalescedCount": record.coalesced_count,
    }
    if record.delivered_at is not None:
        info["deliveredAt"] = _iso(record.delivered_at)
    if record.seen_at is not None:
        info["seenAt"] = _iso(record.seen_at)
    return create_signal(
        "notification",
        record.summary,
        tag_name="notification",
        attributes=tuple(attributes.items()),
        metadata={**copy.deepcopy(record.metadata or {}), "notification": info},
        id=id,
        created_at=now,
        thread_id=record.thread_id,
        resource_id=record.resource_id,
    )


@dataclass(frozen=True)
class NotificationSummary:
    #: Records still pending.
    pending: int
    #: Counts by source, sorted by source.
    by_source: dict[str, int]
    #: Counts by priority, urgent first (present priorities only).
    by_priority: dict[str, int]
    notification_ids: list[str]
    #: The highest priority present (None when there are no records).
    priority: Priority | None
    thread_id: str | None = None
    resource_id: str | None = None
    agent_id: str | None = None

    @property
    def text(self) -> str:
        if not self.by_source:
            return NO_PENDING_TEXT
        return ", ".join(f"{source}: {count}" for source, count in self.by_source.items())


def summarize_records(records: Sequence[NotificationRecord], pending_count: int | None = None) -> NotificationSummary:
    by_source: dict[str, int] = {}
    by_priority: dict[str, int] = {}
    for record in records:
        by_source[record.source] = by_source.get(record.source, 0) + 1
        by_priority[record.priority] = by_priority.get(record.priority, 0) + 1
    ranked = sorted(by_priority, key=PRIORITY_RANK.__getitem__)
    first = records[0] if records else None
    return NotificationSummary(
        pending=sum(r.status == "pending" for r in records) if pending_count is None else pending_count,
        by_source=dict(sorted(by_source.items())),
        by_priority={p: by_priority[p] for p in ranked},
        notification_ids=[r.id for r in records],
        priority=cast(Priority, ranked[0]) if ranked else None,
        thread_id=first.thread_id if first else None,
        resource_id=first.resource_id if first else None,
        agent_id=first.agent_id if first else None,
    )


def summary_signal(
    records: Sequence[NotificationRecord],
    pending_count: int | None = None,
    *,
    now: datetime | None = None,
    id: str | None = None,
) -> Signal:
    """`<notification-summary pending="N" priority="highest">github: 2, slack: 1</notification-summary>`.
    `pending_count` defaults to the records still pending."""
    summary = summarize_records(records, pending_count)
    attributes: list[tuple[str, JSON]] = [("pending", summary.pending)]
    if summary.priority is not None:
        attributes.append(("priority", summary.priority))
    info: dict[str, JSON] = {
        "signal": "summary",
        "pending": summary.pending,
        "groups": [{"source": s, "count": c} for s, c in summary.by_source.items()],
        "byPriority": dict(summary.by_priority),
        "notificationIds": list(summary.notification_ids),
    }
    if summary.priority is not None:
        info["priority"] = summary.priority
    return create_signal(
        "notification",
        summary.text,
        tag_name="notification-summary",
        attributes=tuple(attributes),
        metadata={
            "notification": info,
            "notificationSummary": {
                "pending": summary.pending,
                "bySource": dict(summary.by_source),
                "byPriority": dict(summary.by_priority),
                "notificationIds": list(summary.notification_ids),
                "threadId": summary.thread_id,
                "resourceId": summary.resource_id,
                "agentId": summary.agent_id,
            },
            "notificationIds": list(summary.notification_ids),
        },
        id=id,
        created_at=now,
        thread_id=summary.thread_id,
        resource_id=summary.resource_id,
    )


# ---------------------------------------------------------------- routing callbacks


@dataclass(frozen=True)
class RouteResult:
    """What the router did (a subclass may carry more, e.g. a woken run's
    output: results hand the object back unchanged)."""

    action: RouteAction
    #: Present for wake and deliver.
    run_id: str | None = None


class Route(Protocol):
    """Routes a signal into the thread (the runtime's send-signal path).
    `idle_behavior` is what to do when the thread is idle (wake a run, or
    persist without waking); an active thread always gets `deliver`. Resolve
    once routing is decided and, for persist, the row is written; raise when
    the signal cannot be routed or a woken run cannot start."""

    def __call__(
        self,
        signal: Signal,
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        idle_behavior: IdleBehavior,
        stream_options: Any,
    ) -> Awaitable[RouteResult]: ...


#: (resource_id, thread_id) -> "active" | "idle".
ThreadStateFn: TypeAlias = Callable[[str, str], Awaitable[ThreadState]]


# ---------------------------------------------------------------- send and dispatch


@dataclass
class SendResult:
    record: NotificationRecord
    decision: DeliveryDecision
    #: The signal emitted now (full, or the one-record summary), when routing returned.
    signal: Signal | None = None
    routing: RouteResult | None = None
    #: The record is scheduled (deliver_at or summary_at): keep the dispatcher running.
    needs_dispatch: bool = False

    @property
    def run_id(self) -> str | None:
        return self.routing.run_id if self.routing is not None else None


@dataclass
class DispatchFailure:
    record: NotificationRecord
    error: str


@dataclass
class DispatchResult:
    #: Full notifications sent (status delivered, or still seen when marked seen meanwhile).
    delivered: list[NotificationRecord] = field(default_factory=list)
    #: Covered by a summary signal: still pending, summary_at cleared, summary_signal_id set.
    summarized: list[NotificationRecord] = field(default_factory=list)
    #: Left pending without an attempt (policy hold, or a summarised high record while the thread is active).
    skipped: list[NotificationRecord] = field(default_factory=list)
    failed: list[DispatchFailure] = field(default_factory=list)
    #: Every signal routed, in order.
    signals: list[Signal] = field(default_factory=list)


@dataclass
class _Item:
    priority: Priority
    created_at: datetime
    records: list[tuple[NotificationRecord, DeliveryDecision]]
    summary: bool


_DELIVERED_ACTIONS = frozenset({"wake", "deliver"})
_REFUSED_ACTIONS = frozenset({"discard", "blocked"})


class Notifications:
    """The notifications service: send (create or coalesce, decide, route now
    when due) and dispatch (send what came due). One per process; policies are
    per agent (`policies`), with `policy` for agents without one."""

    def __init__(
        self,
        store: NotificationStore | None,
        *,
        policy: DeliveryPolicy | None = None,
        policies: Mapping[str, DeliveryPolicy] | None = None,
        clock: Callable[[], datetime] = utcnow,
        max_attempts: int = MAX_DELIVERY_ATTEMPTS,
    ) -> None:
        self.store = store
        self.policy = policy or DeliveryPolicy()
        self.policies: dict[str, DeliveryPolicy] = dict(policies or {})
        self.clock = clock
        self.max_attempts = max_attempts

    def policy_for(self, agent_id: str | None) -> DeliveryPolicy:
        return self.policies.get(agent_id or "", self.policy)

    def set_policy(self, agent_id: str, policy: DeliveryPolicy | None) -> None:
        if policy is None:
            self.policies.pop(agent_id, None)
        else:
            self.policies[agent_id] = policy

    def _store(self) -> NotificationStore:
        if self.store is None:
            raise _no_store()
        return self.store

    def _now(self, now: datetime | None) -> datetime:
        return _aware(now if now is not None else self.clock())

    # ------------------------------------------------------------ inbox reads and writes

    async def list_notifications(self, query: NotificationQuery) -> NotificationPage:
        return await self._store().list_notifications(query)

    async def set_status(
        self, thread_id: str, notification_id: str, status: Status, *, now: datetime | None = None
    ) -> NotificationRecord:
        """UpdateNotificationStatus: seen, dismissed or archived only."""
        if status not in ("seen", "dismissed", "archived"):
            raise InvalidArgument.field("status", f"{status!r}: only seen, dismissed or archived can be set")
        return await self._store().update(thread_id, notification_id, NotificationPatch(status=status), now=now)

    # ------------------------------------------------------------ send

    @overload
    async def send(
        self,
        notification: NotificationInput,
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        route: Route,
        thread_state: ThreadStateFn,
        now: datetime | None = None,
        stream_options: Any = None,
    ) -> SendResult: ...

    @overload
    async def send(
        self,
        notification: Sequence[NotificationInput],
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        route: Route,
        thread_state: ThreadStateFn,
        now: datetime | None = None,
        stream_options: Any = None,
    ) -> list[SendResult]: ...

    async def send(
        self,
        notification: NotificationInput | Sequence[NotificationInput],
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        route: Route,
        thread_state: ThreadStateFn,
        now: datetime | None = None,
        stream_options: Any = None,
    ) -> SendResult | list[SendResult]:
        """sendNotificationSignal: one result per input (a list in, a list out).
        `stream_options` are the options of a run an immediate delivery wakes."""
        store = self._store()
        single = isinstance(notification, NotificationInput)
        inputs = [notification] if isinstance(notification, NotificationInput) else list(notification)
        violations: list[FieldViolation] = []
        for name, given in (("agent_id", agent_id), ("resource_id", resource_id), ("thread_id", thread_id)):
            if not given:
                violations.append(FieldViolation(name, "required"))
        checked: list[NotificationInput] = []
        for i, value in enumerate(inputs):
            try:
                checked.append(validate_input(value, path="notification" if single else f"notifications[{i}]"))
            except InvalidArgument as exc:
                violations.extend(exc.violations)
        if violations:
            raise InvalidArgument.fields(violations)
        when = self._now(now)
        records = [
            await store.create(value, thread_id=thread_id, resource_id=resource_id, agent_id=agent_id, now=when)
            for value in checked
        ]
        state = _check_state(await thread_state(resource_id, thread_id))
        policy = self.policy_for(agent_id)
        decisions = [await policy.decide(record, state, when) for record in records]
        results = []
        for record, decision in zip(records, decisions, strict=True):
            results.append(
                await self._apply(record, decision, agent_id, resource_id, thread_id, route, when, stream_options)
            )
        return results[0] if single else results

    async def _apply(
        self,
        record: NotificationRecord,
        decision: DeliveryDecision,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        route: Route,
        now: datetime,
        stream_options: Any,
    ) -> SendResult:
        store = self._store()
        reason = decision.reason
        options = stream_options if stream_options is not None else decision.stream_options
        if decision.action == "discard":
            record = await store.update(
                thread_id, record.id, NotificationPatch(status="discarded", delivery_reason=reason), now=now
            )
            return SendResult(record, decision)
        if decision.action == "persist":
            record = await store.update(thread_id, record.id, NotificationPatch(delivery_reason=reason), now=now)
            return SendResult(record, decision, needs_dispatch=due_at(record) is not None)
        if decision.action in ("defer", "summarize"):
            deliver_at = decision.deliver_at
            if decision.action == "summarize" and deliver_at is None:
                deliver_at = record.deliver_at
            summary_at = decision.summary_at
            # Only high emits a summary at once (with its full delivery kept for
            # later); medium and low wait to be batched by the dispatcher.
            emit = (
                decision.action == "summarize"
                and summary_at is not None
                and summary_at <= now
                and record.priority == "high"
                and deliver_at is not None
            )
            record = await store.update(
                thread_id,
                record.id,
                NotificationPatch(
                    deliver_at=deliver_at, summary_at=None if emit else summary_at, delivery_reason=reason
                ),
                now=now,
            )
            if not emit:
                return SendResult(record, decision, needs_dispatch=due_at(record) is not None)
            signal = summary_signal([record], now=now)
            try:
                routing = await route(
                    signal,
                    agent_id=agent_id,
                    resource_id=resource_id,
                    thread_id=thread_id,
                    idle_behavior="persist",
                    stream_options=options,
                )
            except Exception as exc:
                record = await self._attempt_failed(record, _describe(exc), now) or record
                return SendResult(record, decision, needs_dispatch=due_at(record) is not None)
            if routing.action in _DELIVERED_ACTIONS:
                record = await store.update(
                    thread_id, record.id, NotificationPatch(summary_signal_id=signal.id), now=now
                )
            return SendResult(record, decision, signal, routing, needs_dispatch=due_at(record) is not None)
        # deliver, queue: the full notification, routed now.
        signal = notification_signal(replace(record, status="delivered", delivered_at=now), now=now)
        try:
            routing = await route(
                signal,
                agent_id=agent_id,
                resource_id=resource_id,
                thread_id=thread_id,
                idle_behavior="wake",
                stream_options=options,
            )
        except Exception as exc:
            # Kept pending and scheduled now, so the dispatcher retries it (up
            # to max_attempts) instead of leaving it unscheduled forever.
            failed = await self._attempt_failed(
                record, _describe(exc), now, NotificationPatch(delivery_reason=reason, deliver_at=now)
            )
            record = failed or record
            return SendResult(
                record, decision, needs_dispatch=due_at(record) is not None and record.status == "pending"
            )
        record = await store.update(thread_id, record.id, NotificationPatch(delivery_reason=reason), now=now)
        if routing.action in _DELIVERED_ACTIONS:
            marked = await store.mark_delivered(thread_id, record.id, delivered_signal_id=signal.id, attempted_at=now)
            if marked is None:
                raise NotificationNotFound(thread_id, record.id)
            record = marked
        return SendResult(record, decision, signal, routing, needs_dispatch=due_at(record) is not None)

    async def _attempt_failed(
        self,
        record: NotificationRecord,
        error: str,
        now: datetime,
        extra: NotificationPatch | None = None,
    ) -> NotificationRecord | None:
        """One more failed attempt; `failed` at max_attempts (a record already
        there is failed without counting). None when the record is gone."""
        store = self._store()
        current = await store.get(record.thread_id, record.id)
        if current is None:
            return None
        attempts = current.delivery_attempts
        if attempts < self.max_attempts:
            attempts += 1
        patch = replace(
            extra or NotificationPatch(),
            delivery_attempts=attempts,
            last_delivery_attempt_at=now,
            last_delivery_error=error,
        )
        if attempts >= self.max_attempts and current.status == "pending":
            patch = replace(patch, status="failed")
        try:
            return await store.update(record.thread_id, record.id, patch, now=now)
        except NotificationNotFound:
            return None

    # ------------------------------------------------------------ dispatch

    async def dispatch_due(
        self,
        now: datetime | None = None,
        *,
        route: Route,
        thread_state: ThreadStateFn,
        limit: int = 100,
        agent_id: str | None = None,
        resource_id: str | None = None,
    ) -> DispatchResult:
        """One dispatcher pass over the records due at `now` (run it
        periodically). Per thread: the state is read once; every record due for
        a full delivery is an item, and all summary-due records form one summary
        item; items go urgent first, then oldest first."""
        store = self._store()
        when = self._now(now)
        result = DispatchResult()
        due = await store.list_due(when, limit=limit, agent_id=agent_id, resource_id=resource_id)
        groups: dict[tuple[str, str, str], list[NotificationRecord]] = {}
        for record in due:
            if not record.agent_id or not record.resource_id:
                missing = "agent id" if not record.agent_id else "resource id"
                await self._fail(result, record, f"notification has no {missing}", when)
                continue
            groups.setdefault((record.agent_id, record.resource_id, record.thread_id), []).append(record)
        for (group_agent, group_resource, group_thread), records in groups.items():
            try:
                state = _check_state(await thread_state(group_resource, group_thread))
            except Exception as exc:
                for record in records:
                    await self._fail(result, record, _describe(exc), when)
                continue
            policy = self.policy_for(group_agent)
            plans: list[tuple[NotificationRecord, DeliveryDecision]] = []
            for record in records:
                decision = await self._dispatch_decision(policy, record, state, when)
                if decision.hold:
                    result.skipped.append(record)
                else:
                    plans.append((record, decision))
            summary_due = [p for p in plans if p[0].summary_at is not None and p[0].summary_at <= when]
            summarised = {id(p[0]) for p in summary_due}
            items = [_Item(r.priority, r.created_at, [(r, d)], False) for r, d in plans if id(r) not in summarised]
            if summary_due:
                summary_due.sort(key=lambda p: (PRIORITY_RANK[p[0].priority], p[0].created_at))
                top = summary_due[0][0].priority
                earliest = min(r.created_at for r, _ in summary_due)
                items.append(_Item(top, earliest, summary_due, True))
            items.sort(key=lambda item: (PRIORITY_RANK[item.priority], item.created_at))
            for item in items:
                if item.summary:
                    await self._dispatch_summary(result, item, group_agent, state, route, when)
                else:
                    await self._dispatch_one(result, item.records[0], group_agent, state, route, when)
        return result

    async def _dispatch_decision(
        self, policy: DeliveryPolicy, record: NotificationRecord, state: ThreadState, now: datetime
    ) -> DeliveryDecision:
        # At dispatch only stream_options and hold count; a failing policy means a bare wake.
        try:
            decision = await policy.decide(record, state, now)
        except Exception:
            return DeliveryDecision("deliver")
        return DeliveryDecision("deliver", stream_options=decision.stream_options, hold=decision.hold)

    async def _dispatch_summary(
        self,
        result: DispatchResult,
        item: _Item,
        agent_id: str,
        state: ThreadState,
        route: Route,
        now: datetime,
    ) -> None:
        store = self._store()
        # Re-read: a record may have been seen or delivered since it was listed.
        records: list[tuple[NotificationRecord, DeliveryDecision]] = []
        for record, decision in item.records:
            current = await store.get(record.thread_id, record.id)
            if current is not None and current.status == "pending":
                records.append((current, decision))
        if not records:
            return
        first = records[0][0]
        assert first.resource_id is not None
        signal = summary_signal([r for r, _ in records], len(records), now=now)
        everything_low = all(r.priority == "low" for r, _ in records)
        try:
            routing = await route(
                signal,
                agent_id=agent_id,
                resource_id=first.resource_id,
                thread_id=first.thread_id,
                # All low: reach subscribers without waking the model loop.
                idle_behavior="persist" if everything_low else "wake",
                stream_options=records[0][1].stream_options,
            )
            if routing.action in _REFUSED_ACTIONS:
                raise _Refused(routing.action)
        except Exception as exc:
            for record, _ in records:
                await self._fail(result, record, _describe(exc), now)
            return
        result.signals.append(signal)
        for record, _ in records:
            try:
                updated = await store.update(
                    record.thread_id,
                    record.id,
                    NotificationPatch(summary_at=None, summary_signal_id=signal.id, last_delivery_attempt_at=now),
                    now=now,
                )
            except NotificationNotFound as exc:
                result.failed.append(DispatchFailure(record, str(exc)))
                continue
            result.summarized.append(updated)

    async def _dispatch_one(
        self,
        result: DispatchResult,
        plan: tuple[NotificationRecord, DeliveryDecision],
        agent_id: str,
        state: ThreadState,
        route: Route,
        now: datetime,
    ) -> None:
        store = self._store()
        listed, decision = plan
        record = await store.get(listed.thread_id, listed.id)
        if record is None or record.status != "pending" or record.delivered_signal_id:
            return
        if not record.agent_id or not record.resource_id:
            await self._fail(result, record, "notification has no agent id or resource id", now)
            return
        if record.priority == "high" and record.summary_signal_id and state == "active":
            # Its summary already reached the running loop; the full text waits for idle.
            result.skipped.append(record)
            return
        signal = notification_signal(replace(record, status="delivered", delivered_at=now), now=now)
        try:
            routing = await route(
                signal,
                agent_id=agent_id,
                resource_id=record.resource_id,
                thread_id=record.thread_id,
                idle_behavior="wake",
                stream_options=decision.stream_options,
            )
            if routing.action in _REFUSED_ACTIONS:
                raise _Refused(routing.action)
        except Exception as exc:
            await self._fail(result, record, _describe(exc), now)
            return
        result.signals.append(signal)
        marked = await store.mark_delivered(
            record.thread_id, record.id, delivered_signal_id=signal.id, attempted_at=now
        )
        if marked is None:
            result.failed.append(DispatchFailure(record, str(NotificationNotFound(record.thread_id, record.id))))
            return
        result.delivered.append(marked)

    async def _fail(self, result: DispatchResult, record: NotificationRecord, error: str, now: datetime) -> None:
        updated = await self._attempt_failed(record, error, now)
        result.failed.append(DispatchFailure(updated or record, error))


class _Refused(Exception):
    def __init__(self, action: str) -> None:
        super().__init__(f"routing returned {action}")


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


# ---------------------------------------------------------------- inbox tool

_INBOX_ACTIONS = ("list", "read", "markSeen", "dismiss", "archive", "search")
_UNREAD: tuple[Status, ...] = ("pending", "delivered")
_READABLE = frozenset(_UNREAD)
_STATUS_ACTIONS: dict[str, Status] = {"markSeen": "seen", "dismiss": "dismissed", "archive": "archived"}
INBOX_PAGE_SIZE = 20

INBOX_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(_INBOX_ACTIONS)},
        "threadId": {"type": "string"},
        "id": {"type": "string"},
        "status": {"type": "string", "enum": list(STATUSES)},
        "priority": {"type": "string", "enum": list(PRIORITIES)},
        "source": {"type": "string"},
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["action"],
}


def _project(record: NotificationRecord) -> dict[str, JSON]:
    """What the agent sees of a record: no payload, no metadata."""
    out: dict[str, JSON] = {
        "id": record.id,
        "source": record.source,
        "kind": record.kind,
        "summary": record.summary,
        "priority": record.priority,
        "status": record.status,
        "coalescedCount": record.coalesced_count,
        "createdAt": _iso(record.created_at),
        "updatedAt": _iso(record.updated_at),
    }
    if record.attributes:
        out["attributes"] = dict(record.attributes)
    for name, key in (("delivered_at", "deliveredAt"), ("seen_at", "seenAt")):
        when = getattr(record, name)
        if when is not None:
            out[key] = _iso(when)
    return out


class NotificationInbox:
    """The agent's view of its inbox (the `notification-inbox` tool's logic).
    Viewing marks seen: `list` returns unread records a page at a time and
    marks them seen, so repeated lists walk the backlog without repeats."""

    def __init__(self, notifications: Notifications, route: Route) -> None:
        self.notifications = notifications
        self.route = route

    async def execute(self, args: Mapping[str, Any], *, thread_id: str | None, now: datetime | None = None) -> Any:
        action = args.get("action")
        if action not in _INBOX_ACTIONS:
            raise InvalidArgument.field("action", f"one of {', '.join(_INBOX_ACTIONS)}")
        thread = args.get("threadId") or thread_id
        if not thread:
            raise InvalidArgument.field("threadId", "no thread: pass threadId or call from a thread")
        when = self.notifications._now(now)
        notification_id = args.get("id")
        if action in ("markSeen", "dismiss", "archive"):
            if not isinstance(notification_id, str) or not notification_id.strip():
                raise InvalidArgument.field("id", f"{action} needs a notification id")
            record = await self.notifications.set_status(thread, notification_id, _STATUS_ACTIONS[action], now=when)
            return {"notification": _project(record)}
        if action == "search":
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                raise InvalidArgument.field("query", "search needs a non-blank query")
            return await self._list(args, thread, when, search=query, default_unread=False)
        if action == "list":
            return await self._list(args, thread, when, search=None, default_unread=True)
        return await self._read(thread, notification_id if isinstance(notification_id, str) else None, when)

    async def _list(
        self, args: Mapping[str, Any], thread: str, now: datetime, *, search: str | None, default_unread: bool
    ) -> dict[str, Any]:
        store = self.notifications._store()
        explicit = args.get("status")
        limit = args.get("limit") or INBOX_PAGE_SIZE
        if not isinstance(limit, int) or limit < 1:
            raise InvalidArgument.field("limit", "a positive integer")
        page = await store.list_notifications(
            NotificationQuery(
                thread_id=thread,
                status=explicit if explicit else (_UNREAD if default_unread else None),
                priority=args.get("priority") or None,
                source=args.get("source") or None,
                search=search,
                limit=limit,
            )
        )
        records = page.records
        marked = 0
        fresh = [r.id for r in records if r.status in _READABLE]
        # An explicit status lists without side effects; otherwise viewing marks seen.
        if fresh and not explicit:
            try:
                updated = {r.id: r for r in await store.update_status(thread, fresh, "seen", now=now)}
            except Exception:
                updated = {}
            marked = len(updated)
            records = [updated.get(r.id, r) for r in records]
        return {
            "notifications": [_project(r) for r in records],
            "hasMore": page.next_cursor is not None,
            "markedSeen": marked,
        }

    async def _read(self, thread: str, notification_id: str | None, now: datetime) -> dict[str, Any]:
        store = self.notifications._store()
        if notification_id:
            found = await store.get(thread, notification_id)
            candidates = [found] if found is not None else []
            unavailable = 0 if found is not None else 1
        else:
            candidates = (
                await store.list_notifications(NotificationQuery(thread_id=thread, status=_UNREAD, limit=100))
            ).records
            unavailable = 0
        delivered = marked = already = 0
        for record in candidates:
            if record.status not in _READABLE:
                already += 1
                continue
            if record.delivered_signal_id:
                await store.update(thread, record.id, NotificationPatch(status="seen"), now=now)
                marked += 1
                continue
            if not record.agent_id or not record.resource_id:
                unavailable += 1
                continue
            signal = notification_signal(replace(record, status="seen", seen_at=now), now=now)
            try:
                routing = await self.route(
                    signal,
                    agent_id=record.agent_id,
                    resource_id=record.resource_id,
                    thread_id=thread,
                    idle_behavior="wake",
                    stream_options=None,
                )
                if routing.action in _REFUSED_ACTIONS:
                    raise _Refused(routing.action)
            except Exception as exc:
                await self.notifications._attempt_failed(record, _describe(exc), now)
                unavailable += 1
                continue
            await store.update(
                thread,
                record.id,
                NotificationPatch(
                    status="seen", delivered_signal_id=signal.id, delivered_at=now, last_delivery_attempt_at=now
                ),
                now=now,
            )
            delivered += 1
            marked += 1
        parts = [f"{delivered} delivered", f"{marked} marked seen"]
        if already:
            parts.append(f"{already} already read")
        if unavailable:
            parts.append(f"{unavailable} unavailable")
        return {
            "message": ", ".join(parts),
            "delivered": delivered,
            "markedSeen": marked,
            "unavailable": unavailable,
            "alreadyRead": already,
        }


def create_notification_inbox_tool(notifications: Notifications, *, route: Route) -> Tool:
    """The `notification-inbox` tool: list, search, read, markSeen, dismiss,
    archive the calling agent's thread inbox (or `threadId`'s)."""
    inbox = NotificationInbox(notifications, route)

    async def execute(args: Any, context: ToolContext) -> Any:
        return await inbox.execute(args if isinstance(args, Mapping) else {}, thread_id=context.thread_id)

    return Tool(
        INBOX_TOOL_NAME,
        "Notification inbox of this thread: list (unread, marks them seen), search (query), read (one id, "
        "or every unread one, injected as notifications), markSeen, dismiss or archive (id).",
        execute,
        INBOX_INPUT_SCHEMA,
    )
