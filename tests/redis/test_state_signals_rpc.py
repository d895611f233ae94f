"""SendStateSignal under concurrency: one state sent many times at once is
routed exactly once, on every storage backend."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.storage import MessageQuery, Storage
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.server import Running, serving
from support.storage import slow_reads


@pytest.fixture
async def live(storage: Storage) -> AsyncIterator[tuple[Running, Storage]]:
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
