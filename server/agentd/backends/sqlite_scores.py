"""SQLiteScoreStore: the live scorers' scores in a SQLite file.

Built like SQLiteNotificationStore (one connection on one worker thread, each
write one transaction) and able to share its file: its schema steps are
counted in their own table (`scores_schema_version`). Times are integer
microseconds since the Unix epoch; a listing is a keyset over (created_us,
id) descending, as every score store orders them.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from agentd.backends.sqlite_db import SQLiteWorker, Synchronous, migrate, read, write
from agentd.backends.sqlite_storage import from_micros, to_micros
from agentd.runtime.errors import AgentdError
from agentd.runtime.scoring.record import Score, ScorePage, ScoreQuery, page_of
from agentd.runtime.scoring.store import ScoreStore
from agentd.runtime.storage import StorageError

__all__ = ["SCORE_MIGRATIONS", "SQLiteScoreStore"]

#: SCORE_MIGRATIONS[n] takes the schema from version n to n + 1. Append; never edit applied steps.
SCORE_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE scores (
            id TEXT PRIMARY KEY,
            tenant TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            scorer TEXT NOT NULL,
            run_id TEXT NOT NULL,
            thread_id TEXT NOT NULL,
            resource_id TEXT NOT NULL,
            value REAL NOT NULL,
            reason TEXT NOT NULL,
            label TEXT NOT NULL,
            source TEXT NOT NULL,
            created_us INTEGER NOT NULL
        )""",
        "CREATE INDEX scores_by_tenant ON scores (tenant, created_us, id)",
        "CREATE INDEX scores_by_run ON scores (tenant, run_id)",
        "CREATE INDEX scores_by_thread ON scores (tenant, thread_id, created_us, id)",
    ),
)
_COLUMNS = "id, tenant, agent_id, scorer, run_id, thread_id, resource_id, value, reason, label, source, created_us"


class SQLiteScoreStore(SQLiteWorker, ScoreStore):
    """Scores in the SQLite file at `path` (parent folders are created)."""

    backend = "sqlite"
    label = "sqlite score store"
    passthrough = (StorageError, AgentdError)

    def __init__(self, path: str | Path, *, synchronous: Synchronous = "NORMAL", busy_timeout: float = 5.0) -> None:
        super().__init__(path, synchronous=synchronous, busy_timeout=busy_timeout, thread_name="agentd-sqlite-scores")

    def _prepare(self, connection: sqlite3.Connection) -> int:
        return migrate(connection, SCORE_MIGRATIONS, "scores_schema_version", "the scores database")

    def __repr__(self) -> str:
        return f"SQLiteScoreStore({str(self.path)!r})"

    async def add(self, score: Score) -> None:
        row = (
            score.id,
            score.tenant,
            score.agent_id,
            score.scorer,
            score.run_id,
            score.thread_id,
            score.resource_id,
            score.value,
            score.reason,
            score.label,
            score.source,
            to_micros(score.created_at),
        )

        def insert(connection: sqlite3.Connection) -> None:
            with write(connection):
                connection.execute(f"INSERT INTO scores ({_COLUMNS}) VALUES ({', '.join('?' * 12)})", row)

        await self._call(insert)

    async def list(self, query: ScoreQuery) -> ScorePage:
        where: list[str] = ["tenant = ?"]
        params: list[str | int] = [query.tenant]
        for column in ("agent_id", "thread_id", "run_id", "scorer"):
            value = getattr(query, column)
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        if query.start is not None:
            where.append("created_us >= ?")
            params.append(to_micros(query.start))
        if query.end is not None:
            where.append("created_us < ?")
            params.append(to_micros(query.end))
        if query.after is not None:
            when, id = query.after
            where.append("(created_us < ? OR (created_us = ? AND id < ?))")
            params.extend([to_micros(when), to_micros(when), id])
        sql = (
            f"SELECT {_COLUMNS} FROM scores WHERE {' AND '.join(where)} "
            f"ORDER BY created_us DESC, id DESC LIMIT {query.limit + 1}"
        )

        def select(connection: sqlite3.Connection) -> list[Score]:
            with read(connection):
                return [_score(row) for row in connection.execute(sql, params)]

        return page_of(query, await self._call(select))


def _score(row: Any) -> Score:
    id, tenant, agent_id, scorer, run_id, thread_id, resource_id, value, reason, label, source, created_us = row
    return Score(
        id=id,
        tenant=tenant,
        agent_id=agent_id,
        scorer=scorer,
        run_id=run_id,
        value=float(value),
        created_at=from_micros(created_us),
        thread_id=thread_id,
        resource_id=resource_id,
        reason=reason,
        label=label,
        source=source,
    )
