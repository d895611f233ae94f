"""SQLiteOverrideStore: editor override versions in the SQLite file.

Built like SQLiteNotificationStore (one worker thread, one transaction per
write) and able to share its file: its schema steps are counted in their own
table (`overrides_schema_version`). A write reads the head and inserts the
next version inside one BEGIN IMMEDIATE transaction, so two writers never
make the same version. One process per file: nobody else writes, so `watch`
has nothing to tell.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentd.backends.sqlite_db import SQLiteWorker, Synchronous, migrate, read, write
from agentd.backends.stored_overrides import decode_version, encode_version
from agentd.runtime.errors import AgentdError
from agentd.runtime.overrides import MAX_VERSIONS, OverrideStore, OverrideVersion
from agentd.runtime.overrides.store import Step, kept_range, next_version
from agentd.runtime.storage import StorageError

__all__ = ["OVERRIDE_MIGRATIONS", "SQLiteOverrideStore"]

#: OVERRIDE_MIGRATIONS[n] takes the schema from version n to n + 1. Append; never edit applied steps.
OVERRIDE_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE agent_overrides (
            key TEXT NOT NULL,
            version INTEGER NOT NULL,
            body BLOB NOT NULL,
            PRIMARY KEY (key, version)
        )""",
    ),
)
_VERSION_TABLE = "overrides_schema_version"


class SQLiteOverrideStore(SQLiteWorker, OverrideStore):
    label = "sqlite overrides store"
    passthrough = (StorageError, AgentdError)

    def __init__(self, path: str | Path, *, synchronous: Synchronous = "NORMAL", busy_timeout: float = 5.0) -> None:
        super().__init__(
            path, synchronous=synchronous, busy_timeout=busy_timeout, thread_name="agentd-sqlite-overrides"
        )

    def _prepare(self, connection: sqlite3.Connection) -> int:
        return migrate(connection, OVERRIDE_MIGRATIONS, _VERSION_TABLE, "the overrides database")

    def __repr__(self) -> str:
        return f"SQLiteOverrideStore({str(self.path)!r})"

    @staticmethod
    def _head(connection: sqlite3.Connection, key: str) -> OverrideVersion | None:
        row = connection.execute(
            "SELECT body FROM agent_overrides WHERE key = ? ORDER BY version DESC LIMIT 1", (key,)
        ).fetchone()
        return decode_version(row[0]) if row else None

    async def head(self, key: str) -> OverrideVersion | None:
        def job(connection: sqlite3.Connection) -> OverrideVersion | None:
            with read(connection):
                return self._head(connection, key)

        return await self._call(job)

    async def version(self, key: str, version: int) -> OverrideVersion | None:
        def job(connection: sqlite3.Connection) -> OverrideVersion | None:
            with read(connection):
                row = connection.execute(
                    "SELECT body FROM agent_overrides WHERE key = ? AND version = ?", (key, version)
                ).fetchone()
            return decode_version(row[0]) if row else None

        return await self._call(job)

    async def versions(self, key: str, below: int | None, limit: int) -> list[OverrideVersion]:
        def job(connection: sqlite3.Connection) -> list[OverrideVersion]:
            with read(connection):
                head = self._head(connection, key)
                if head is None:
                    return []
                wanted = kept_range(head.version, below, limit)
                if not wanted:
                    return []
                rows = connection.execute(
                    "SELECT body FROM agent_overrides WHERE key = ? AND version BETWEEN ? AND ? ORDER BY version DESC",
                    (key, wanted[-1], wanted[0]),
                ).fetchall()
            return [decode_version(body) for (body,) in rows]

        return await self._call(job)

    async def append(self, key: str, step: Step, updated_by: str) -> OverrideVersion:
        def job(connection: sqlite3.Connection) -> OverrideVersion:
            with write(connection):
                made = next_version(key, self._head(connection, key), step, updated_by)
                connection.execute(
                    "INSERT INTO agent_overrides (key, version, body) VALUES (?, ?, ?)",
                    (key, made.version, encode_version(made)),
                )
                connection.execute(
                    "DELETE FROM agent_overrides WHERE key = ? AND version <= ?", (key, made.version - MAX_VERSIONS)
                )
            return made

        return await self._call(job)
