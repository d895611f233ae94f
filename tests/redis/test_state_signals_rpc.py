"""SendStateSignal under concurrency: one state sent many times at once is
routed exactly once, on every storage backend."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.backends.redis_storage import RedisStorage
from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage, MessageQuery, Storage, Thread
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from redis_server import RedisServer
from support.server import Running, serving


def slow_reads(storage: Storage, delay: float = 0.005) -> None:
    """Thread reads take a while, as over a network: a check-then-write that reads
    through get_thread lets every concurrent sender read before anyone writes."""
    read = storage.get_thread

    async def get_thread(thread_id: str) -> Thread | None:
        thread = await read(thread_id)
        await asyncio.sleep(delay)  # the answer travels back
        return thread

    storage.get_thread = get_thread  # type: ignore[method-assign]


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def live(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Running, Storage]]:
    storage: Storage
    if request.param == "memory":
        storage = InMemoryStorage()
    elif request.param == "sqlite":
        storage = SQLiteStorage(tmp_path / "agentd.db")
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        storage = RedisStorage(server.url, key_prefix=f"agentd-test-state-rpc:{uuid.uuid4().hex[:12]}:")
    async with serving([Agent(id="chat", memory=Memory(storage))], storage=storage) as running:
        yield running, storage


async def test_concurrent_state_signals_are_deduplicated_exactly_once(live: tuple[Running, Storage]) -> None:
    running, storage = live
    await running.threads.CreateThread(tpb.CreateThreadRequest(thread=tpb.Thread(id="t1", resource_id="u1")))
    request = sspb.SendStateSignalRequest(
        agent_id="chat",
        target=spb.SignalTarget(resource_id="u1", thread_id="t1"),
        if_idle=spb.IfIdle(behavior=spb.IDLE_BEHAVIOR_PERSIST),
        state=spb.StateSignalInput(
            id="browser", cache_key="browser:a", mode=spb.STATE_MODE_SNAPSHOT, text="Browser open at example.com"
        ),
    )
    slow_reads(storage)
    replies = await asyncio.gather(*(running.signals.SendStateSignal(request) for _ in range(20)))
    assert Counter(r.decision.WhichOneof("action") for r in replies) == {"persist": 1, "skipped_unchanged": 19}
    assert {r.version for r in replies} == {1}
    assert len((await storage.list_messages(MessageQuery("t1"))).messages) == 1
