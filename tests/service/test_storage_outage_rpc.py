"""A storage outage as callers see it: the storage-bound services report
NOT_SERVING until storage answers again, and a call that needs storage is
UNAVAILABLE STORAGE_UNAVAILABLE with a RetryInfo (never RUN_FAILED, never OK
for something that was not stored). Calls that need no storage still work."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage, Storage, StorageError
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from support.errors import rich_error
from support.health import NOT_SERVING, SERVING, all_health, health
from support.polling import until
from support.server import Running, start_server


class OutageStorage(InMemoryStorage):
    """In-memory storage whose every operation fails while `down` is set."""

    down = False

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if name in Storage.__abstractmethods__ and object.__getattribute__(self, "down"):

            async def refused(*args: Any, **kwargs: Any) -> Any:
                raise StorageError("connection refused")

            return refused
        return value


@pytest.fixture
async def outage() -> AsyncIterator[tuple[Running, OutageStorage]]:
    storage = OutageStorage()
    agents = [Agent(id="chat", memory=Memory(storage)), Agent(id="echo")]
    running = await start_server(agents, storage=storage, health_probe_interval=0.02)
    try:
        yield running, storage
    finally:
        await running.channel.close()
        await running.server.stop(0)


async def test_health_follows_the_storage_and_comes_back_by_itself(outage: tuple[Running, OutageStorage]) -> None:
    running, storage = outage
    storage.down = True
    await until(lambda: all_health(running.addr, NOT_SERVING), what="the storage-bound services NOT_SERVING")
    assert await health(running.addr, "agentd.v1.AgentService") == SERVING
    assert await health(running.addr, "agentd.v1.CacheService") == SERVING
    storage.down = False
    await until(lambda: all_health(running.addr, SERVING), what="the storage-bound services SERVING again")


async def test_calls_that_need_storage_are_unavailable_with_a_retry_delay(
    outage: tuple[Running, OutageStorage],
) -> None:
    running, storage = outage
    storage.down = True
    thread = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t1"))
    with pytest.raises(grpc.aio.AioRpcError) as generate:
        await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="hi", options=thread))
    refused = rich_error(generate.value)
    assert (refused.code, refused.reason) == (grpc.StatusCode.UNAVAILABLE, "STORAGE_UNAVAILABLE")
    assert refused.retry_delay is not None and refused.retry_delay > 0
    with pytest.raises(grpc.aio.AioRpcError) as send:
        await running.signals.SendMessage(
            sspb.SendMessageRequest(
                agent_id="chat",
                target=spb.SignalTarget(resource_id="u1", thread_id="t1"),
                message=spb.MessageInput(text="lost?"),
            )
        )
    refused = rich_error(send.value)
    assert (refused.code, refused.reason) == (grpc.StatusCode.UNAVAILABLE, "STORAGE_UNAVAILABLE")
    # An agent without memory needs no storage.
    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="still here"))
    assert reply.text == "still here"
    storage.down = False
    assert await storage.list_pending() == []  # nothing half-done was left behind
    again = await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="hi", options=thread))
    assert again.text == "hi"
