"""The inbox record and what changes it: `NotificationRecord` (one record),
`NotificationInput` (what a producer sends), `NotificationPatch` (fields to
change), their statuses and priorities, and the pure functions every store
applies, so that the memory, SQLite and Redis stores keep one semantics:
validation, a fresh record, coalescing a duplicate into its pending twin, a
patch, a delivery mark and the due time."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from agentd.runtime.errors import FieldViolation, InvalidArgument
from agentd.runtime.messages import aware, utcnow
from agentd.runtime.signals import JSON, Attributes, AttributesInput, normalize_attributes
from agentd.runtime.unset import UNSET, Unset

Priority = Literal["low", "medium", "high", "urgent"]
Status = Literal["pending", "delivered", "seen", "dismissed", "archived", "discarded", "failed"]

PRIORITIES: tuple[Priority, ...] = ("low", "medium", "high", "urgent")
STATUSES: tuple[Status, ...] = ("pending", "delivered", "seen", "dismissed", "archived", "discarded", "failed")
#: Dispatch order: urgent first.
PRIORITY_RANK: dict[str, int] = {"urgent": 0, "high": 1, "medium": 2, "low": 3}
#: Statuses whose change stamps a time field.
STATUS_STAMPS: dict[str, str] = {
    "delivered": "delivered_at",
    "seen": "seen_at",
    "dismissed": "dismissed_at",
    "archived": "archived_at",
    "discarded": "discarded_at",
}


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
    """Fields to change; UNSET (the runtime's "not given") leaves a field alone, None clears an optional one.
    A status change stamps its time field (delivered_at, seen_at, ...) unless the
    patch sets that field too."""

    status: Status | Unset = UNSET
    summary: str | Unset = UNSET
    priority: Priority | Unset = UNSET
    payload: JSON | Unset = UNSET
    attributes: AttributesInput | Unset = UNSET
    metadata: dict[str, JSON] | Unset | None = UNSET
    deliver_at: datetime | Unset | None = UNSET
    summary_at: datetime | Unset | None = UNSET
    delivered_at: datetime | Unset | None = UNSET
    seen_at: datetime | Unset | None = UNSET
    dismissed_at: datetime | Unset | None = UNSET
    archived_at: datetime | Unset | None = UNSET
    discarded_at: datetime | Unset | None = UNSET
    delivery_reason: str | Unset | None = UNSET
    delivery_attempts: int | Unset = UNSET
    last_delivery_attempt_at: datetime | Unset | None = UNSET
    last_delivery_error: str | Unset | None = UNSET
    delivered_signal_id: str | Unset | None = UNSET
    summary_signal_id: str | Unset | None = UNSET


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


def _opt(value: str | None) -> str | None:
    return value or None


def _is_json(value: JSON) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def check_priority(value: object, name: str = "priority") -> Priority:
    if value not in PRIORITIES:
        raise InvalidArgument.field(name, f"{value!r} is not one of {', '.join(PRIORITIES)}")
    return value


def check_status(value: object, name: str = "status") -> Status:
    if value not in STATUSES:
        raise InvalidArgument.field(name, f"{value!r} is not one of {', '.join(STATUSES)}")
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
            value = check_status(value)
        elif name == "priority":
            value = check_priority(value)
        elif name == "attributes":
            value = normalize_attributes(value)
        elif name in _PATCH_TIMES and value is not None:
            value = aware(value)
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
