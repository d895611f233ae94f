"""SQLiteStorage: threads and messages in one SQLite file, the embedded default.

Driving sqlite3 from asyncio: one connection, used only by one dedicated
worker thread (a one-thread executor). Every call is a job on that thread, so
calls are serialised in the order they were made, the event loop never blocks
on disk, and each write is one transaction (BEGIN IMMEDIATE ... COMMIT).
Several processes (or several SQLiteStorage objects) may share a file: SQLite
serialises their writers, waiting up to `busy_timeout` seconds for the lock.

Durability: WAL journal with `synchronous=NORMAL` by default. A commit has been
written to the WAL file (the operating system's page cache) before the call
returns, so a write that returned survives the process being killed (SIGKILL)
and is read by the next process. NORMAL does not fsync each commit, so a power
cut or a kernel crash may lose the last transactions (never corrupt the file).
Pass `synchronous="FULL"` to fsync the WAL on every commit and keep even those,
at the cost of one fsync per write.

Rows: messages are stored as the cache codec's tagged JSON (every part type
round-trips, FilePart bytes and SignalPart signals included), next to the
columns listings query: thread, role, created_at, a system-reminder flag and
the insertion sequence (INTEGER PRIMARY KEY AUTOINCREMENT: assigned once, on
the first save, never reused; an upsert keeps it). Times are integer
microseconds since the Unix epoch (UTC), so (created_us, seq) sorts exactly
like the (created_at, sequence) keyset of the cursors. A naive datetime is
taken to be UTC. Threads are columns; their times read back in UTC.

Schema: the `schema_version` table records every applied migration; on the
first use the steps of MIGRATIONS not yet applied run in order, each in its own
transaction. The database is opened on first use (or by `open()`), so building
the storage from configuration touches no file.
"""

from __future__ import annotations

import copy
import sqlite3
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from agentd.backends.sqlite_db import SQLiteWorker, Synchronous, migrate, read, write
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

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLiteStorage"]


#: Ordered schema steps: MIGRATIONS[n] takes the schema from version n to n + 1.
#: Append new steps (e.g. ALTER TABLE ... ADD COLUMN); never edit applied ones.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE threads (
            id TEXT PRIMARY KEY,
            resource_id TEXT NOT NULL,
            title TEXT NOT NULL,
            metadata BLOB NOT NULL,
            created_us INTEGER NOT NULL,
            updated_us INTEGER NOT NULL
        )""",
        "CREATE INDEX threads_by_resource ON threads (resource_id, created_us, id)",
        """CREATE TABLE messages (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
            resource_id TEXT,
            role TEXT NOT NULL,
            created_us INTEGER NOT NULL,
            system_reminder INTEGER NOT NULL DEFAULT 0,
            body BLOB NOT NULL
        )""",
        "CREATE INDEX messages_by_thread ON messages (thread_id, created_us, seq)",
        "CREATE INDEX messages_visible_by_thread ON messages (thread_id, system_reminder, created_us, seq)",
    ),
    (
        # The outbox of acknowledged signals (see storage.PendingSignal).
        """CREATE TABLE pending_signals (
            id TEXT PRIMARY KEY,
            created_us INTEGER NOT NULL,
            body BLOB NOT NULL
        )""",
    ),
    (
        # Background work in flight (see storage.BackgroundTask).
        """CREATE TABLE background_tasks (
            id TEXT PRIMARY KEY,
            created_us INTEGER NOT NULL,
            body BLOB NOT NULL
        )""",
    ),
)
#: The schema version this code writes.
SCHEMA_VERSION = len(MIGRATIONS)

#: Host parameters per statement when a list of ids is expanded into IN (...).
_CHUNK = 500
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def to_micros(when: datetime) -> int:
    """Microseconds since the Unix epoch (a naive datetime is taken as UTC)."""
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - _EPOCH) // _MICROSECOND


def from_micros(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def _chunks(items: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]


def _marks(count: int) -> str:
    return ",".join("?" * count)


class SQLiteStorage(SQLiteWorker, Storage):
    """Threads and messages in the SQLite file at `path` (parent folders are created)."""

    backend = "sqlite"

    label = "sqlite storage"
    passthrough = (StorageError, ThreadExists)

    def __init__(self, path: str | Path, *, synchronous: Synchronous = "NORMAL", busy_timeout: float = 5.0) -> None:
        super().__init__(path, synchronous=synchronous, busy_timeout=busy_timeout, thread_name="agentd-sqlite")

    def _prepare(self, connection: sqlite3.Connection) -> int:
        connection.execute("PRAGMA foreign_keys=ON")
        return migrate(connection, MIGRATIONS, "schema_version", "the database")

    def __repr__(self) -> str:
        return f"SQLiteStorage({str(self.path)!r})"

    # ------------------------------------------------------------ threads

    async def get_thread(self, thread_id: str) -> Thread | None:
        return await self._call(lambda c: _get_thread(c, thread_id))

    async def create_thread(self, thread: Thread) -> Thread:
        row = _thread_row(thread)

        def create(connection: sqlite3.Connection) -> None:
            with write(connection):
                if _get_thread(connection, thread.id) is not None:
                    raise ThreadExists(thread.id)
                connection.execute(
                    "INSERT INTO threads (id, resource_id, title, metadata, created_us, updated_us) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    row,
                )

        await self._call(create)
        return _thread(row)

    async def save_thread(self, thread: Thread) -> Thread:
        row = _thread_row(thread)

        def save(connection: sqlite3.Connection) -> Thread:
            with write(connection):
                connection.execute(
                    "INSERT INTO threads (id, resource_id, title, metadata, created_us, updated_us) "
                    "VALUES (?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (id) DO UPDATE SET resource_id = excluded.resource_id, title = excluded.title, "
                    "metadata = excluded.metadata, updated_us = excluded.updated_us",
                    row,
                )
                stored = _get_thread(connection, thread.id)
            assert stored is not None
            return stored

        return await self._call(save)

    async def update_thread(
        self, thread_id: str, *, title: str | None = None, metadata: dict[str, JSON] | None = None
    ) -> Thread | None:
        encoded = None if metadata is None else codec.encode(metadata)
        now = to_micros(utcnow())

        def update(connection: sqlite3.Connection) -> Thread | None:
            with write(connection):
                changed = connection.execute(
                    "UPDATE threads SET title = coalesce(?, title), metadata = coalesce(?, metadata), "
                    "updated_us = ? WHERE id = ?",
                    (title, encoded, now, thread_id),
                ).rowcount
                return _get_thread(connection, thread_id) if changed else None

        return await self._call(update)

    async def update_thread_metadata(self, thread_id: str, fn: MetadataUpdate[R]) -> tuple[Thread, R] | None:
        def update(connection: sqlite3.Connection) -> tuple[Thread, R] | None:
            # One write transaction: its lock keeps every other writer (another
            # process on the file too) out between the read and the write.
            with write(connection):
                thread = _get_thread(connection, thread_id)
                if thread is None:
                    return None
                metadata, result = fn(copy.deepcopy(thread.metadata))
                if metadata is not None:
                    thread.metadata = metadata
                    thread.updated_at = utcnow()
                    _, _, _, encoded, _, updated_us = _thread_row(thread)
                    connection.execute(
                        "UPDATE threads SET metadata = ?, updated_us = ? WHERE id = ?", (encoded, updated_us, thread_id)
                    )
                    thread = _thread(_thread_row(thread))  # as a read gives it back (times to the microsecond)
                return thread, result

        return await self._call(update)

    async def delete_thread(self, thread_id: str) -> bool:
        def delete(connection: sqlite3.Connection) -> bool:
            with write(connection):
                connection.execute("DELETE FROM messages WHERE thread_id = ?", (thread_id,))
                return connection.execute("DELETE FROM threads WHERE id = ?", (thread_id,)).rowcount > 0

        return await self._call(delete)

    async def select_threads(
        self, resource_id: str, before: tuple[datetime, str] | None, count: int, metadata: dict[str, JSON]
    ) -> list[Thread]:
        sql = "SELECT id, resource_id, title, metadata, created_us, updated_us FROM threads WHERE resource_id = ?"
        args: list[Any] = [resource_id]
        if before is not None:
            sql += " AND (created_us, id) < (?, ?)"
            args += [to_micros(before[0]), before[1]]
        sql += " ORDER BY created_us DESC, id DESC"
        if not metadata:
            sql += " LIMIT ?"
            args.append(count)

        def select(connection: sqlite3.Connection) -> list[Thread]:
            found: list[Thread] = []
            with read(connection):
                # One statement: a consistent snapshot, read lazily until enough match.
                rows = connection.execute(sql, args)
                try:
                    for row in rows:
                        thread = _thread(row)
                        if all(thread.metadata.get(k) == v for k, v in metadata.items()):
                            found.append(thread)
                            if len(found) == count:
                                break
                finally:
                    rows.close()
            return found

        return await self._call(select)

    # ------------------------------------------------------------ messages

    async def save_messages(self, messages: Sequence[Message]) -> None:
        for message in messages:
            if not message.thread_id:
                raise StorageError(f"message {message.id}: thread {message.thread_id!r} does not exist")
        try:
            rows = [
                (
                    m.id,
                    m.thread_id,
                    m.resource_id,
                    m.role,
                    to_micros(m.created_at),
                    int(is_system_reminder(m)),
                    codec.encode(m),
                )
                for m in messages
            ]
        except CacheError as exc:
            raise StorageError(f"sqlite storage: a message cannot be stored: {exc}") from exc
        if not rows:
            return
        thread_ids = sorted({m.thread_id for m in messages if m.thread_id})

        def save(connection: sqlite3.Connection) -> None:
            with write(connection):
                present = {
                    row[0]
                    for chunk in _chunks(thread_ids)
                    for row in connection.execute(f"SELECT id FROM threads WHERE id IN ({_marks(len(chunk))})", chunk)
                }
                for message in messages:
                    if message.thread_id not in present:
                        raise StorageError(f"message {message.id}: thread {message.thread_id!r} does not exist")
                connection.executemany(
                    "INSERT INTO messages (id, thread_id, resource_id, role, created_us, system_reminder, body) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (id) DO UPDATE SET thread_id = excluded.thread_id, "
                    "resource_id = excluded.resource_id, role = excluded.role, created_us = excluded.created_us, "
                    "system_reminder = excluded.system_reminder, body = excluded.body",
                    rows,
                )

        await self._call(save)

    async def list_messages(self, query: MessageQuery) -> MessagePage:
        sql = "SELECT seq, body FROM messages WHERE thread_id = ?"
        args: list[Any] = [query.thread_id]
        if not query.include_system_reminders:
            sql += " AND system_reminder = 0"
        if query.start is not None:
            sql += " AND created_us >= ?"
            args.append(to_micros(query.start))
        if query.end is not None:
            sql += " AND created_us <= ?"
            args.append(to_micros(query.end))
        if query.cursor is not None:
            when, sequence = decode_message_cursor(query.cursor)
            sql += " AND (created_us, seq) > (?, ?)" if query.order == "asc" else " AND (created_us, seq) < (?, ?)"
            args += [to_micros(when), sequence]
        direction = "ASC" if query.order == "asc" else "DESC"
        sql += f" ORDER BY created_us {direction}, seq {direction}"
        if query.limit is not None:
            sql += " LIMIT ?"
            args.append(max(query.limit, 0) + 1)

        def select(connection: sqlite3.Connection) -> list[tuple[int, Message]]:
            with read(connection):
                return [(seq, _message(body)) for seq, body in connection.execute(sql, args)]

        rows = await self._call(select)
        page = rows if query.limit is None else rows[: query.limit]
        more = query.limit is not None and len(rows) > query.limit
        next_cursor = encode_message_cursor(page[-1][1].created_at, page[-1][0]) if more and page else None
        return MessagePage([message for _, message in page], next_cursor)

    async def get_messages(self, ids: Sequence[str]) -> list[Message]:
        unique = list(dict.fromkeys(ids))

        def select(connection: sqlite3.Connection) -> list[Message]:
            with read(connection):
                bodies: dict[str, bytes] = {
                    mid: body
                    for chunk in _chunks(unique)
                    for mid, body in connection.execute(
                        f"SELECT id, body FROM messages WHERE id IN ({_marks(len(chunk))})", chunk
                    )
                }
            # Decoded once per occurrence: a repeated id gives two separate copies.
            return [_message(bodies[i]) for i in ids if i in bodies]

        return await self._call(select) if unique else []

    async def save_pending(self, entry: PendingSignal) -> None:
        body = codec.encode(entry)
        created = to_micros(entry.created_at)

        def save(connection: sqlite3.Connection) -> None:
            with write(connection):
                connection.execute(
                    "INSERT INTO pending_signals (id, created_us, body) VALUES (?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET body = excluded.body",
                    (entry.signal.id, created, body),
                )

        await self._call(save)

    async def delete_pending(self, signal_ids: Sequence[str]) -> None:
        unique = list(dict.fromkeys(signal_ids))

        def delete(connection: sqlite3.Connection) -> None:
            with write(connection):
                for chunk in _chunks(unique):
                    connection.execute(f"DELETE FROM pending_signals WHERE id IN ({_marks(len(chunk))})", chunk)

        if unique:
            await self._call(delete)

    async def list_pending(self) -> list[PendingSignal]:
        def read(connection: sqlite3.Connection) -> list[bytes]:
            return [row[0] for row in connection.execute("SELECT body FROM pending_signals ORDER BY created_us, id")]

        return [codec.decode(body) for body in await self._call(read)]

    async def save_background_task(self, task: BackgroundTask) -> None:
        body = codec.encode(task)
        created = to_micros(task.created_at)

        def save(connection: sqlite3.Connection) -> None:
            with write(connection):
                connection.execute(
                    "INSERT INTO background_tasks (id, created_us, body) VALUES (?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET body = excluded.body",
                    (task.task_id, created, body),
                )

        await self._call(save)

    async def delete_background_task(self, task_id: str) -> None:
        def delete(connection: sqlite3.Connection) -> None:
            with write(connection):
                connection.execute("DELETE FROM background_tasks WHERE id = ?", (task_id,))

        await self._call(delete)

    async def list_background_tasks(self) -> list[BackgroundTask]:
        def read(connection: sqlite3.Connection) -> list[bytes]:
            return [row[0] for row in connection.execute("SELECT body FROM background_tasks ORDER BY created_us, id")]

        return [codec.decode(body) for body in await self._call(read)]

    async def delete_messages(self, ids: Sequence[str]) -> int:
        unique = list(dict.fromkeys(ids))

        def delete(connection: sqlite3.Connection) -> int:
            with write(connection):
                return sum(
                    connection.execute(f"DELETE FROM messages WHERE id IN ({_marks(len(chunk))})", chunk).rowcount
                    for chunk in _chunks(unique)
                )

        return await self._call(delete) if unique else 0


# ---------------------------------------------------------------- helpers (worker thread)


def _get_thread(connection: sqlite3.Connection, thread_id: str) -> Thread | None:
    row = connection.execute(
        "SELECT id, resource_id, title, metadata, created_us, updated_us FROM threads WHERE id = ?", (thread_id,)
    ).fetchone()
    return None if row is None else _thread(row)


def _thread_row(thread: Thread) -> tuple[str, str, str, bytes, int, int]:
    return (
        thread.id,
        thread.resource_id,
        thread.title,
        encode_metadata(thread),
        to_micros(thread.created_at),
        to_micros(thread.updated_at),
    )


def _thread(row: Sequence[Any]) -> Thread:
    thread_id, resource_id, title, metadata, created_us, updated_us = row
    return decode_thread(thread_id, resource_id, title, metadata, from_micros(created_us), from_micros(updated_us))


def _message(body: bytes) -> Message:
    return decode_message(body, "a stored message row")
