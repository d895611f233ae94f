"""SQLiteNotificationStore beyond the store suite (tests/redis/test_notification_store.py
runs every store behaviour against it): records survive a reopen, and one file
holds the inbox for several stores and the thread storage too."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from agentd.backends.sqlite_notifications import NOTIFICATION_SCHEMA_VERSION, SQLiteNotificationStore
from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime.notifications import NotificationPatch
from agentd.runtime.storage import Thread
from support.notifications import MINUTE, T0, THREAD, create, note


async def test_sqlite_records_survive_a_reopen_and_share_a_file(tmp_path: Path) -> None:
    path = tmp_path / "agentd.db"
    first = SQLiteNotificationStore(path)
    record = await create(
        first,
        note(
            priority="urgent",
            payload={"nested": [1, 2.5, None, True]},
            attributes=[("z", 1), ("a", {"k": [1]})],
            metadata={"m": "x"},
            dedupe_key="d",
        ),
        now=datetime(2024, 1, 1, 9, tzinfo=timezone(timedelta(hours=2))),
    )
    record = await first.update(THREAD, record.id, NotificationPatch(deliver_at=T0), now=T0)
    await first.close()
    second = SQLiteNotificationStore(path)
    other = SQLiteNotificationStore(path)
    # The thread storage lives in the same file without disturbing the inbox.
    threads = SQLiteStorage(path)
    try:
        assert await second.get(THREAD, record.id) == record
        reread = await second.get(THREAD, record.id)
        assert reread is not None and reread.attributes == (("z", 1), ("a", {"k": [1]}))
        merged = await create(other, note("again", dedupe_key="d"), now=T0 + MINUTE)
        assert merged.id == record.id and merged.coalesced_count == 2
        assert [r.id for r in await second.list_due(T0)] == [record.id]
        await threads.create_thread(Thread("t", "r"))
        assert second.schema_version == NOTIFICATION_SCHEMA_VERSION
    finally:
        await second.close()
        await other.close()
        await threads.close()
