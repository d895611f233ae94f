"""SQLiteStorage beyond the storage suite (tests/redis/test_storage.py runs
every storage behaviour against it): two instances and a reopen on one file,
its schema versions and migrations, WAL, concurrent writers, and a writer
process SIGKILLed mid-way."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

from agentd.backends.sqlite_storage import SCHEMA_VERSION, SQLiteStorage
from agentd.runtime.storage import MessageQuery, Storage, StorageError
from support.storage import T0, bump, ids, text, thread

ROOT = Path(__file__).resolve().parents[2]


async def test_sqlite_a_second_instance_and_a_reopen_see_the_data(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "agentd.db"
    first = SQLiteStorage(path)
    second = SQLiteStorage(path)
    try:
        await first.create_thread(thread(created_at=T0))
        await first.save_messages([text("t-1", "m1", "from first")])
        assert path.exists()
        assert ids((await second.list_messages(MessageQuery("t-1"))).messages) == ["m1"]
        await second.save_messages([text("t-1", "m2", "from second")])
        await second.update_thread("t-1", title="renamed")
        assert ids((await first.list_messages(MessageQuery("t-1"))).messages) == ["m1", "m2"]
        got = await first.get_thread("t-1")
        assert got is not None and got.title == "renamed"
    finally:
        await first.close()
        await second.close()
    reopened = SQLiteStorage(str(path))
    try:
        assert [m.text for m in (await reopened.list_messages(MessageQuery("t-1"))).messages] == [
            "from first",
            "from second",
        ]
        assert [t.id for t in (await reopened.list_threads("r-1")).threads] == ["t-1"]
    finally:
        await reopened.close()


async def test_sqlite_records_its_schema_version_and_uses_wal(tmp_path: Path) -> None:
    path = tmp_path / "agentd.db"
    store = SQLiteStorage(path)
    assert not path.exists()  # opened on first use
    await store.open()
    assert store.schema_version == SCHEMA_VERSION == 3
    assert store.journal_mode == "wal"
    await store.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version ORDER BY version").fetchall() == [(1,), (2,), (3,)]
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"threads", "messages", "schema_version", "pending_signals", "background_tasks"} <= tables
    again = SQLiteStorage(path)
    await again.open()  # nothing to apply: still one row per version
    await again.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
        db.execute("INSERT INTO schema_version VALUES (99, 'the future')")
    newer = SQLiteStorage(path)
    with pytest.raises(StorageError, match="newer"):
        await newer.open()
    await newer.close()


async def test_sqlite_concurrent_writers_all_land(tmp_path: Path) -> None:
    path = tmp_path / "agentd.db"
    store = SQLiteStorage(path)
    other = SQLiteStorage(path)  # a second connection writing at the same time
    try:
        await store.create_thread(thread())
        await asyncio.gather(*(store.create_thread(thread(f"extra-{i}")) for i in range(20)))

        async def save(owner: Storage, i: int) -> None:
            await owner.save_messages([text("t-1", f"m{i:02d}-{k}", f"{i}/{k}", at=T0) for k in range(2)])

        await asyncio.gather(
            *(save(store, i) for i in range(50)),
            *(save(other, i) for i in range(50, 60)),
            *(store.update_thread(f"extra-{i}", title=str(i)) for i in range(20)),
        )
        listed = (await store.list_messages(MessageQuery("t-1", limit=None))).messages
        assert len(listed) == 120 and len(set(ids(listed))) == 120
        for i in range(60):  # a batch stays in its order
            assert ids(listed).index(f"m{i:02d}-0") < ids(listed).index(f"m{i:02d}-1")
        threads = (await store.list_threads("r-1", limit=100)).threads
        assert len(threads) == 21
        assert sorted(t.title for t in threads if t.id != "t-1") == sorted(str(i) for i in range(20))
    finally:
        await store.close()
        await other.close()


async def test_sqlite_metadata_updates_of_two_instances_are_atomic(tmp_path: Path) -> None:
    path = tmp_path / "agentd.db"
    first, second = SQLiteStorage(path), SQLiteStorage(path)
    try:
        await first.create_thread(thread())
        await asyncio.gather(
            *(store.update_thread_metadata("t-1", bump) for _ in range(15) for store in (first, second))
        )
        stored = await second.get_thread("t-1")
        assert stored is not None and stored.metadata == {"count": 30}
    finally:
        await first.close()
        await second.close()


async def test_sqlite_a_killed_writer_loses_nothing_it_returned(tmp_path: Path) -> None:
    # A process that saves, reports, and is SIGKILLed: no close(), no clean exit.
    path = tmp_path / "agentd.db"
    script = textwrap.dedent(
        f"""
        import asyncio, os, signal, sys
        from datetime import UTC, datetime
        from agentd.backends.sqlite_storage import SQLiteStorage
        from agentd.runtime.messages import Message, TextPart
        from agentd.runtime.storage import Thread

        async def main():
            store = SQLiteStorage({str(path)!r})
            await store.create_thread(Thread("t-1", "r-1"))
            for i in range(20):
                at = datetime(2024, 1, 1, tzinfo=UTC)
                row = Message("user", [TextPart(str(i))], id=f"m{{i}}", thread_id="t-1", created_at=at)
                await store.save_messages([row])
            await store.update_thread("t-1", title="last write")
            print("saved", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

        asyncio.run(main())
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), str(ROOT / "gen" / "python")])}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == -9, stderr.decode()
    assert stdout.decode().strip() == "saved"
    store = SQLiteStorage(path)
    try:
        got = await store.get_thread("t-1")
        assert got is not None and got.title == "last write"
        listed = (await store.list_messages(MessageQuery("t-1", limit=None))).messages
        assert [m.text for m in listed] == [str(i) for i in range(20)]
    finally:
        await store.close()


async def test_sqlite_closed_and_unopenable(tmp_path: Path) -> None:
    store = SQLiteStorage(tmp_path / "agentd.db")
    await store.create_thread(thread())
    await store.close()
    await store.close()  # twice is fine
    with pytest.raises(StorageError, match="closed"):
        await store.get_thread("t-1")
    (tmp_path / "a-file").write_text("not a folder")
    broken = SQLiteStorage(tmp_path / "a-file" / "agentd.db")
    with pytest.raises(StorageError):
        await broken.get_thread("t-1")
    await broken.close()
    with pytest.raises(ValueError):
        SQLiteStorage(tmp_path / "x.db", synchronous="SOMETIMES")  # type: ignore[arg-type]


async def test_sqlite_migrates_a_version_1_database_keeping_its_data(tmp_path: Path) -> None:
    path = tmp_path / "agentd.db"
    store = SQLiteStorage(path)
    await store.create_thread(thread())
    await store.close()
    with sqlite3.connect(path) as db:  # turn the file back into a version 1 database
        db.execute("DROP TABLE pending_signals")
        db.execute("DROP TABLE background_tasks")
        db.execute("DELETE FROM schema_version WHERE version > 1")
    upgraded = SQLiteStorage(path)
    try:
        await upgraded.open()
        assert upgraded.schema_version == SCHEMA_VERSION
        assert await upgraded.get_thread(thread().id) is not None
        assert await upgraded.list_pending() == []
        assert await upgraded.list_background_tasks() == []
    finally:
        await upgraded.close()
