"""SQLiteNotificationStore: the notifications inbox in a SQLite file.

Built like SQLiteStorage: one connection used by one worker thread, so calls
run in order, the event loop never waits on disk, and each write is one
transaction (BEGIN IMMEDIATE ... COMMIT). A create that coalesces reads and
rewrites its twin inside that one transaction, so two processes sending the
same dedupe key never make two pending records.

It may share a file with SQLiteStorage: its schema steps are counted in their
own table (`notifications_schema_version`). Durability is SQLiteStorage's:
WAL with `synchronous=NORMAL` (a returned write survives the process being
killed) unless `synchronous="FULL"`.

Rows: the record itself is the cache codec's tagged JSON (`body`; attribute
order, payload, tuples and timezone-aware times round-trip exactly), next to
the columns that queries filter and sort on. Times are integer microseconds
since the Unix epoch; `due_us` is min(deliver_at, summary_at). `seq` (assigned
on insert, kept by updates) breaks ties exactly as the in-memory store does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agentd.backends.sqlite_db import SQLiteWorker, Synchronous, migrate, read, write
from agentd.backends.sqlite_storage import to_micros
from agentd.runtime import codec
from agentd.runtime.errors import AgentdError
from agentd.runtime.notifications.query import NotificationPage, NotificationQuery, page_of
from agentd.runtime.notifications.record import NotificationRecord, due_at
from agentd.runtime.notifications.store import Creation, NotificationExists, NotificationStore
from agentd.runtime.storage import StorageError

__all__ = ["NOTIFICATION_MIGRATIONS", "NOTIFICATION_SCHEMA_VERSION", "SQLiteNotificationStore"]


codec.register(NotificationRecord)

#: NOTIFICATION_MIGRATIONS[n] takes the schema from version n to n + 1. Append; never edit applied steps.
NOTIFICATION_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE notifications (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            thread_id TEXT NOT NULL,
            id TEXT NOT NULL,
            resource_id TEXT,
            agent_id TEXT,
            source TEXT NOT NULL,
            kind TEXT NOT NULL,
            summary TEXT NOT NULL,
            priority TEXT NOT NULL,
            status TEXT NOT NULL,
            dedupe_key TEXT,
            coalesce_key TEXT,
            updated_us INTEGER NOT NULL,
            due_us INTEGER,
            body BLOB NOT NULL,
            UNIQUE (thread_id, id)
        )""",
        "CREATE INDEX notifications_by_thread ON notifications (thread_id, updated_us, seq)",
        "CREATE INDEX notifications_due ON notifications (due_us, updated_us, seq) "
        "WHERE status = 'pending' AND due_us IS NOT NULL",
        "CREATE INDEX notifications_coalesce ON notifications (thread_id, source, kind, status)",
    ),
)
NOTIFICATION_SCHEMA_VERSION = len(NOTIFICATION_MIGRATIONS)
_VERSION_TABLE = "notifications_schema_version"
_COLUMNS = (
    "thread_id, id, resource_id, agent_id, source, kind, summary, priority, status, "
    "dedupe_key, coalesce_key, updated_us, due_us, body"
)
_UPSERT = (
    f"INSERT INTO notifications ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (thread_id, id) DO UPDATE SET resource_id = excluded.resource_id, "
    "agent_id = excluded.agent_id, source = excluded.source, kind = excluded.kind, "
    "summary = excluded.summary, priority = excluded.priority, status = excluded.status, "
    "dedupe_key = excluded.dedupe_key, coalesce_key = excluded.coalesce_key, "
    "updated_us = excluded.updated_us, due_us = excluded.due_us, body = excluded.body"
)


class SQLiteNotificationStore(SQLiteWorker, NotificationStore):
    """Notification records in the SQLite file at `path` (parent folders are created)."""

    backend = "sqlite"

    label = "sqlite notification store"
    passthrough = (StorageError, AgentdError)

    def __init__(self, path: str | Path, *, synchronous: Synchronous = "NORMAL", busy_timeout: float = 5.0) -> None:
        super().__init__(
            path, synchronous=synchronous, busy_timeout=busy_timeout, thread_name="agentd-sqlite-notifications"
        )

    def _prepare(self, connection: sqlite3.Connection) -> int:
        # The in-memory store's case-insensitive match, exactly (SQLite's lower() folds ASCII only).
        connection.create_function("agentd_icontains", 2, _icontains, deterministic=True)
        return migrate(connection, NOTIFICATION_MIGRATIONS, _VERSION_TABLE, "the notifications database")

    def __repr__(self) -> str:
        return f"SQLiteNotificationStore({str(self.path)!r})"

    # ------------------------------------------------------------ records

    async def insert_or_coalesce(self, creation: Creation) -> NotificationRecord:
        fresh = creation.record

        def insert(connection: sqlite3.Connection) -> NotificationRecord:
            # The twin search and the write are one transaction (BEGIN IMMEDIATE).
            with write(connection):
                twin = None
                if creation.keyed:
                    # Creation.twin, as a query: the same match, the newest (updated, seq) first.
                    twin = connection.execute(
                        "SELECT body FROM notifications WHERE thread_id = ? AND source = ? AND kind = ? "
                        "AND status = 'pending' AND agent_id IS ? AND resource_id IS ? "
                        "AND ((? IS NOT NULL AND dedupe_key = ?) OR (? IS NOT NULL AND coalesce_key = ?)) "
                        "ORDER BY updated_us DESC, seq DESC LIMIT 1",
                        (
                            fresh.thread_id,
                            fresh.source,
                            fresh.kind,
                            fresh.agent_id,
                            fresh.resource_id,
                            fresh.dedupe_key,
                            fresh.dedupe_key,
                            fresh.coalesce_key,
                            fresh.coalesce_key,
                        ),
                    ).fetchone()
                if twin is not None:
                    record = creation.coalesced(_record(twin[0]))
                else:
                    record = fresh
                    taken = connection.execute(
                        "SELECT 1 FROM notifications WHERE thread_id = ? AND id = ?", (fresh.thread_id, fresh.id)
                    ).fetchone()
                    if taken:
                        raise NotificationExists(fresh.thread_id, fresh.id)
                connection.execute(_UPSERT, _row(record))
            return record

        return await self._call(insert)

    async def get(self, thread_id: str, id: str) -> NotificationRecord | None:
        def select(connection: sqlite3.Connection) -> NotificationRecord | None:
            return _get(connection, thread_id, id)

        return await self._call(select)

    async def list_notifications(self, query: NotificationQuery) -> NotificationPage:
        position = query.validate()
        sql = "SELECT seq, body FROM notifications WHERE thread_id = ?"
        args: list[Any] = [query.thread_id]
        for column, values in (("status", query.statuses()), ("priority", query.priorities())):
            if values:
                sql += f" AND {column} IN ({','.join('?' * len(values))})"
                args += sorted(values)
        for column, wanted in (
            ("source", query.source),
            ("resource_id", query.resource_id),
            ("agent_id", query.agent_id),
        ):
            if wanted:
                sql += f" AND {column} = ?"
                args.append(wanted)
        search = (query.search or "").strip()
        if search:
            sql += " AND (agentd_icontains(summary, ?) OR agentd_icontains(kind, ?) OR agentd_icontains(source, ?))"
            args += [search] * 3
        if position is not None:
            sql += " AND (updated_us, seq) < (?, ?)"
            args += [to_micros(position[0]), position[1]]
        sql += " ORDER BY updated_us DESC, seq DESC LIMIT ? OFFSET ?"
        args += [-1 if query.limit is None else query.limit + 1, query.offset]

        def select(connection: sqlite3.Connection) -> list[tuple[int, NotificationRecord]]:
            with read(connection):
                return [(seq, _record(body)) for seq, body in connection.execute(sql, args)]

        return page_of(await self._call(select), query.limit)

    async def select_due(
        self, now: datetime, limit: int, agent_id: str | None, resource_id: str | None
    ) -> list[NotificationRecord]:
        sql = "SELECT body FROM notifications WHERE status = 'pending' AND due_us IS NOT NULL AND due_us <= ?"
        args: list[Any] = [to_micros(now)]
        if agent_id:
            sql += " AND agent_id = ?"
            args.append(agent_id)
        if resource_id:
            sql += " AND resource_id = ?"
            args.append(resource_id)
        sql += " ORDER BY due_us, updated_us, seq LIMIT ?"
        args.append(limit)

        def select(connection: sqlite3.Connection) -> list[NotificationRecord]:
            with read(connection):
                return [_record(body) for (body,) in connection.execute(sql, args)]

        return await self._call(select)

    async def rewrite(
        self, op: str, thread_id: str, ids: Sequence[str], change: Callable[[NotificationRecord], NotificationRecord]
    ) -> list[NotificationRecord | None]:
        def rewrite(connection: sqlite3.Connection) -> list[NotificationRecord | None]:
            out: list[NotificationRecord | None] = []
            with write(connection):
                for notification_id in ids:
                    current = _get(connection, thread_id, notification_id)
                    record = None if current is None else change(current)
                    if record is not None:
                        connection.execute(_UPSERT, _row(record))
                    out.append(record)
            return out

        return await self._call(rewrite)

    async def clear(self) -> None:
        def clear(connection: sqlite3.Connection) -> None:
            with write(connection):
                connection.execute("DELETE FROM notifications")

        await self._call(clear)


# ---------------------------------------------------------------- helpers (worker thread)


def _icontains(haystack: str | None, needle: str | None) -> int:
    """notifications.matches_query's test: Python's lower(), not SQLite's ASCII-only one."""
    return int(haystack is not None and needle is not None and needle.lower() in haystack.lower())


def _get(connection: sqlite3.Connection, thread_id: str, id: str) -> NotificationRecord | None:
    row = connection.execute(
        "SELECT body FROM notifications WHERE thread_id = ? AND id = ?", (thread_id, id)
    ).fetchone()
    return None if row is None else _record(row[0])


def _row(record: NotificationRecord) -> tuple[Any, ...]:
    due = due_at(record)
    return (
        record.thread_id,
        record.id,
        record.resource_id,
        record.agent_id,
        record.source,
        record.kind,
        record.summary,
        record.priority,
        record.status,
        record.dedupe_key,
        record.coalesce_key,
        to_micros(record.updated_at),
        None if due is None else to_micros(due),
        codec.encode(record),
    )


def _record(body: bytes) -> NotificationRecord:
    record = codec.decode(body)
    if not isinstance(record, NotificationRecord):
        raise StorageError(f"a stored notification row holds a {type(record).__name__}")
    return record
