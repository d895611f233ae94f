"""Reading a thread's inbox: `NotificationQuery` (filters, offset, limit and a
keyset cursor), `NotificationPage`, the cursor encoding and `matches_query`,
the filter every store applies (or reproduces exactly in its own query)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import aware
from agentd.runtime.notifications.record import (
    NotificationRecord,
    Priority,
    Status,
    check_priority,
    check_status,
)


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
        return frozenset(check_status(v) for v in values)

    def priorities(self) -> frozenset[str]:
        values = (self.priority,) if isinstance(self.priority, str) else tuple(self.priority or ())
        return frozenset(check_priority(v) for v in values)

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
    """A page of a thread's notification records."""

    records: list[NotificationRecord]
    #: None on the last page.
    next_cursor: str | None = None


def encode_cursor(updated_at: datetime, sequence: int) -> str:
    return f"{aware(updated_at).isoformat()}|{sequence}"


def decode_cursor(cursor: str) -> tuple[datetime, int]:
    """(updated_at, insertion sequence); InvalidArgument for anything else."""
    when, sep, sequence = cursor.rpartition("|")
    try:
        if not sep:
            raise ValueError(cursor)
        return aware(datetime.fromisoformat(when)), int(sequence)
    except ValueError:
        raise InvalidArgument.field("cursor", "not a cursor from a previous page") from None


def page_of(rows: Sequence[tuple[int, NotificationRecord]], limit: int | None) -> NotificationPage:
    """The page that starts `rows` (matches in listing order past the cursor and
    the offset, each with its insertion sequence; a store reads one more than
    `limit` to tell that there is a next page)."""
    page = rows if limit is None else rows[:limit]
    more = len(page) < len(rows)
    cursor = encode_cursor(page[-1][1].updated_at, page[-1][0]) if more and page else None
    return NotificationPage([record for _, record in page], cursor)


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
