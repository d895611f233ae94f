"""What every SQLite-backed store shares: one connection owned by one worker
thread (sqlite3 connections are not for sharing across threads), WAL mode,
explicit transactions and numbered migrations applied on open."""

from __future__ import annotations

import asyncio
import fcntl
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal, TypeVar

from agentd.runtime.cache import CacheError
from agentd.runtime.messages import utcnow
from agentd.runtime.storage import StorageError

T = TypeVar("T")
Synchronous = Literal["OFF", "NORMAL", "FULL", "EXTRA"]

#: UPSERT (INSERT ... ON CONFLICT DO UPDATE) arrived in 3.24, row values in 3.15.
MINIMUM_SQLITE = (3, 24, 0)


class _FileLocks:
    """One agentd process per SQLite file: an exclusive lock on "<file>.lock"
    (which holds the owner's pid), shared by the stores of this process that
    use the file. The kernel drops it when the process dies, however it dies."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        #: Locked files: (the lock file's descriptor, stores using it).
        self._held: dict[Path, tuple[int, int]] = {}

    def acquire(self, path: Path) -> None:
        key = path.resolve()
        with self._guard:
            if key in self._held:
                fd, users = self._held[key]
                self._held[key] = (fd, users + 1)
                return
            lock_path = key.with_name(key.name + ".lock")
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise StorageError(
                    f"{path} is in use by another agentd process (pid {owner}); one process per SQLite file: "
                    "stop it, or give this one its own [storage] path (replicas share Redis, not SQLite)"
                ) from None
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            self._held[key] = (fd, 1)

    def release(self, path: Path) -> None:
        key = path.resolve()
        with self._guard:
            fd, users = self._held.get(key, (-1, 0))
            if users > 1:
                self._held[key] = (fd, users - 1)
            elif users == 1:
                del self._held[key]
                os.close(fd)  # drops the lock


_FILE_LOCKS = _FileLocks()


class SQLiteWorker:
    """The worker thread, the connection and its lifecycle; subclasses say what
    their errors are called, which migrations to apply, and which exceptions
    their jobs raise on purpose."""

    #: How errors name the store ("sqlite storage is closed").
    label = "sqlite"
    #: Exceptions jobs raise on purpose: passed through, not wrapped in StorageError.
    passthrough: tuple[type[BaseException], ...] = (StorageError,)

    def __init__(self, path: str | Path, *, synchronous: Synchronous, busy_timeout: float, thread_name: str) -> None:
        if synchronous not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous: {synchronous!r} is not OFF, NORMAL, FULL or EXTRA")
        self.path = path if str(path) == ":memory:" else Path(path)
        self.synchronous = synchronous
        self.busy_timeout = busy_timeout
        #: The schema version of the open database (0 until opened).
        self.schema_version = 0
        #: "wal" once opened (SQLite keeps its own mode where WAL is impossible, e.g. ":memory:").
        self.journal_mode = ""
        # One worker: every job runs on the thread that owns the connection.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=thread_name)
        self._connection: sqlite3.Connection | None = None
        self._closed = False

    async def _call(self, job: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise StorageError(f"{self.label} is closed")
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, self._run, job)
        except RuntimeError as exc:  # the executor was shut down by close() meanwhile
            if self._closed:
                raise StorageError(f"{self.label} is closed") from exc
            raise

    def _run(self, job: Callable[[sqlite3.Connection], T]) -> T:
        """On the worker thread: open on first use, run, map failures to StorageError."""
        try:
            return job(self._connection or self._open())
        except self.passthrough:
            raise
        except CacheError as exc:
            raise StorageError(f"{self.label}: {exc}") from exc
        except (sqlite3.Error, OSError) as exc:
            raise StorageError(f"{self.label} {self.path}: {type(exc).__name__}: {exc}") from exc

    def _open(self) -> sqlite3.Connection:
        if sqlite3.sqlite_version_info < MINIMUM_SQLITE:
            raise StorageError(f"SQLite {sqlite3.sqlite_version} is too old: agentd needs 3.24 or later (upsert)")
        if isinstance(self.path, Path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _FILE_LOCKS.acquire(self.path)
        try:
            # isolation_level=None: no implicit transactions; every write says BEGIN IMMEDIATE.
            connection = sqlite3.connect(str(self.path), timeout=self.busy_timeout, isolation_level=None)
        except BaseException:
            self._unlock()
            raise
        try:
            (self.journal_mode,) = connection.execute("PRAGMA journal_mode=WAL").fetchone()
            connection.execute(f"PRAGMA synchronous={self.synchronous}")
            self.schema_version = self._prepare(connection)
        except BaseException:
            connection.close()
            self._unlock()
            raise
        self._connection = connection
        return connection

    def _unlock(self) -> None:
        if isinstance(self.path, Path):
            _FILE_LOCKS.release(self.path)

    def _prepare(self, connection: sqlite3.Connection) -> int:
        """Per-connection set-up and migrations; returns the schema version."""
        raise NotImplementedError

    async def open(self) -> None:
        """Opens the database and applies pending migrations now (else on first use)."""
        await self._call(lambda connection: None)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._executor, self._close_connection)
        finally:
            self._executor.shutdown(wait=False)

    def _close_connection(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
            self._unlock()


class Transaction:
    """BEGIN ... COMMIT, or ROLLBACK when the block raises."""

    def __init__(self, connection: sqlite3.Connection, begin: str) -> None:
        self.connection = connection
        self.begin = begin

    def __enter__(self) -> None:
        self.connection.execute(self.begin)

    def __exit__(self, kind: object, exc: object, traceback: object) -> None:
        try:
            if exc is None:
                self.connection.execute("COMMIT")
        finally:
            # After an error in the block or in COMMIT itself: never leave a
            # transaction open for the next job.
            if self.connection.in_transaction:
                self.connection.execute("ROLLBACK")


def write(connection: sqlite3.Connection) -> Transaction:
    # IMMEDIATE: take the write lock up front, so a read never has to be
    # upgraded to a write midway (which could fail with SQLITE_BUSY).
    return Transaction(connection, "BEGIN IMMEDIATE")


def read(connection: sqlite3.Connection) -> Transaction:
    return Transaction(connection, "BEGIN")


def migrate(connection: sqlite3.Connection, migrations: Sequence[Sequence[str]], table: str, what: str) -> int:
    """Applies the pending `migrations`, each in one transaction, recording them
    in `table`; returns the version. `what` names the schema in errors."""
    with write(connection):
        connection.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
    latest = len(migrations)
    while True:
        with write(connection):
            # Read inside the write transaction: another process may be migrating too.
            (version,) = connection.execute(f"SELECT coalesce(max(version), 0) FROM {table}").fetchone()
            if version > latest:
                raise StorageError(f"{what} has schema version {version}, newer than this agentd knows ({latest})")
            if version == latest:
                return int(version)
            for statement in migrations[version]:
                connection.execute(statement)
            connection.execute(
                f"INSERT INTO {table} (version, applied_at) VALUES (?, ?)", (version + 1, utcnow().isoformat())
            )
