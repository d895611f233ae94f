"""A second `agentd serve` on the same checkout: it binds before it replays
anything, and one SQLite file has one process."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime.signals import create_message_signal
from agentd.runtime.storage import PendingSignal

from .serverproc import DEFAULT_CONFIG, HOST, free_port, own_sqlite, start_server


def sqlite_config(tmp_path: Path) -> Path:
    """agentd.toml with its SQLite file under `tmp_path`."""
    return own_sqlite(DEFAULT_CONFIG, tmp_path)


async def pending(path: Path) -> list[PendingSignal]:
    store = SQLiteStorage(path)
    try:
        return await store.list_pending()
    finally:
        await store.close()


def test_a_server_whose_port_is_taken_replays_nothing(tmp_path: Path) -> None:
    config = sqlite_config(tmp_path)

    async def leave_an_acknowledged_signal() -> None:
        store = SQLiteStorage(tmp_path / "agentd.db")
        try:
            await store.save_pending(PendingSignal(create_message_signal("paid once"), "chat", "u1", "t1"))
        finally:
            await store.close()

    asyncio.run(leave_an_acknowledged_signal())
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        server = start_server(config=config, port=taken.getsockname()[1])
        assert server.proc.wait(timeout=30) == 1
    log = server.log_text()
    assert "cannot listen" in log and "recovered" not in log, log
    assert [p.signal.text for p in asyncio.run(pending(tmp_path / "agentd.db"))] == ["paid once"]


def test_a_second_process_on_one_sqlite_file_exits_naming_the_first(tmp_path: Path) -> None:
    config = sqlite_config(tmp_path)
    first = start_server(config=config)
    second = None
    try:
        first.wait_serving(timeout=30)
        second = start_server(config=config, port=free_port())
        assert second.proc.wait(timeout=30) == 1
        log = second.log_text()
        assert f"pid {first.proc.pid}" in log and "agentd: cannot start" in log, log
        assert "Traceback" not in log
    finally:
        first.stop()
        if second is not None:
            second.stop()
    # Once the first is gone, the file is free again.
    again = start_server(config=config)
    try:
        again.wait_serving(timeout=30)
    finally:
        again.stop()
