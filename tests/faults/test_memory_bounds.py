"""Memory a caller can make the server hold, counted on live objects (not the
process's RSS): subscribers to threads that do not exist leave nothing; a
deleted thread takes its chunk log with it, even mid-run; the memory cache
stays within `max_bytes`; and a round of load, repeated, leaves no more
allocated than the round before it (tracemalloc)."""

from __future__ import annotations

import asyncio
import gc
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from google.protobuf import struct_pb2

from agentd import config
from agentd.runtime import registry
from agentd.runtime.cache import InMemoryServerCache
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import cache_service_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.polling import until
from support.server import Running, start_server

pytestmark = pytest.mark.timeout(120)

AGENTS = """
[storage]
backend = "memory"

[[agents]]
id = "echo"
model = "local/echo"

[[agents]]
id = "chat"
model = "local/echo"
memory = { last_messages = 5 }

[[agents]]
id = "long"
model = "local/scripted"
memory = { last_messages = 5 }
default_options = { provider_options = { local = { script = [
  { deltas = ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight "], delayMs = 2000 },
] } } }
"""

CACHE_MAX_BYTES = 3 * 1024 * 1024
#: Calls of each kind in one load round.
ROUND = 60


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    (tmp_path / "agentd.toml").write_text(AGENTS)
    loaded = config.load(tmp_path / "agentd.toml", env={})
    cache = InMemoryServerCache(max_bytes=CACHE_MAX_BYTES)
    server = await start_server(list(loaded.agents), storage=loaded.storage, caches={"memory": cache})
    try:
        yield server
    finally:
        await server.channel.close()
        await server.server.stop(0)


async def at_most(limit: int, calls: list[Callable[[], Awaitable[None]]]) -> None:
    """Runs the calls, `limit` at a time."""
    gate = asyncio.Semaphore(limit)

    async def one(call: Callable[[], Awaitable[None]]) -> None:
        async with gate:
            await call()

    await asyncio.gather(*(one(c) for c in calls))


async def subscribe_and_leave(running: Running, thread_id: str) -> None:
    call = running.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id=thread_id))
    response = await call.read()
    assert response.HasField("snapshot")
    call.cancel()


def logs(running: Running) -> int:
    return len(running.host.threads.log)  # type: ignore[arg-type]


async def test_20000_subscribes_to_threads_that_do_not_exist_keep_nothing(running: Running) -> None:
    await at_most(200, [lambda i=i: subscribe_and_leave(running, f"nobody-{i}") for i in range(20_000)])
    await until(
        lambda: logs(running) == 0 and len(running.host.threads) == 0, within=5, what="no log and no thread state"
    )


async def test_deleting_200_threads_mid_run_drops_their_logs(running: Running) -> None:
    threads = [f"deleted-{i}" for i in range(200)]

    async def wake(thread_id: str) -> None:
        reply = await running.signals.SendMessage(
            sspb.SendMessageRequest(
                agent_id="long",
                target=spb.SignalTarget(resource_id="u1", thread_id=thread_id),
                message=spb.MessageInput(text="take your time"),
            )
        )
        assert reply.decision.WhichOneof("action") == "wake"

    await at_most(50, [lambda t=t: wake(t) for t in threads])
    await until(lambda: len(running.host.runs.active()) == 200, within=10, what="200 runs in flight")
    assert logs(running) == 200  # each thread's run is logging

    async def delete(thread_id: str) -> None:
        await running.threads.DeleteThread(tpb.DeleteThreadRequest(resource_id="u1", thread_id=thread_id))

    await at_most(50, [lambda t=t: delete(t) for t in threads])
    await until(lambda: not running.host.runs.active(), within=10, what="every run aborted")
    assert logs(running) == 0
    assert len(running.host.threads) == 0
    assert await running.host.storage.list_pending() == []


async def test_the_memory_cache_stays_within_max_bytes(running: Running) -> None:
    cache = running.host.cache
    assert isinstance(cache, InMemoryServerCache)
    value = struct_pb2.Value(string_value="x" * 1_000_000)
    for i in range(100):
        await running.cache.SetCacheEntry(cpb.SetCacheEntryRequest(key=f"big-{i}", value=value))
        assert cache.bytes <= CACHE_MAX_BYTES, (i, cache.bytes)
    latest = await running.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key="big-99"))
    assert latest.found and len(latest.value.string_value) == 1_000_000
    evicted = await running.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key="big-0"))
    assert not evicted.found
    with pytest.raises(grpc.aio.AioRpcError) as too_large:
        await running.cache.SetCacheEntry(
            cpb.SetCacheEntryRequest(key="huge", value=struct_pb2.Value(string_value="x" * 3_500_000))
        )
    refused = rich_error(too_large.value)
    assert (refused.code, refused.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "CACHE_ENTRY_TOO_LARGE")
    assert cache.bytes <= CACHE_MAX_BYTES


async def load_round(running: Running, n: int) -> None:
    """Generate (plain and thread-bound), Subscribe, cache writes and a thread deleted."""

    async def one(i: int) -> None:
        thread = f"round-{i}"
        reply = await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text=f"hello {i}"))
        assert reply.text == f"hello {i}"
        options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id=thread))
        await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="remember", options=options))
        await subscribe_and_leave(running, thread)
        value = struct_pb2.Value(string_value=f"value {i}")
        await running.cache.SetCacheEntry(cpb.SetCacheEntryRequest(key=f"round-{i % 20}", value=value))
        await running.threads.DeleteThread(tpb.DeleteThreadRequest(resource_id="u1", thread_id=thread))

    await at_most(20, [lambda i=i: one(i) for i in range(n)])


def traced() -> int:
    gc.collect()
    current, _ = tracemalloc.get_traced_memory()
    return current


async def test_a_repeated_load_round_allocates_nothing_that_stays(
    running: Running, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run registry remembers the latest runs that ended (1000): fewer here, so the warm-up fills it.
    monkeypatch.setattr(registry, "_ENDED_KEPT", 50, raising=False)
    tracemalloc.start()
    try:
        for _ in range(2):  # warm-up: what is built once (pools, interned names) is built
            await load_round(running, ROUND)
        before = traced()
        for _ in range(3):
            await load_round(running, ROUND)
        after = traced()
    finally:
        tracemalloc.stop()
    # 3 * ROUND calls of each kind (twice as many runs): a leak of 1 KiB a run would show as 360 KiB.
    assert after - before < 128 * 1024, f"{(after - before) / 1024:.0f} KiB more after three more rounds"
    assert logs(running) == 0 and len(running.host.threads) == 0
