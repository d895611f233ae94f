"""What the model reads: a record as a full `<notification>` signal, and
records as one `<notification-summary>` (counts by source and priority)."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

from agentd.runtime.messages import aware
from agentd.runtime.notifications.record import PRIORITY_RANK, NotificationRecord, Priority
from agentd.runtime.signals import JSON, Signal, create_signal

NO_PENDING_TEXT = "No pending notifications."


def iso(when: datetime) -> str:
    return aware(when).astimezone(UTC).isoformat().replace("+00:00", "Z")


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
        info["deliveredAt"] = iso(record.delivered_at)
    if record.seen_at is not None:
        info["seenAt"] = iso(record.seen_at)
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
    """What a `<notification-summary>` counts: pending records by source and priority."""

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
