"""Background tools under replicas, over gRPC: two servers sharing one real
redis-server (storage, leases, the thread log). A background result wakes
its thread through the thread runtime's routing, so the continuation runs on
the replica that holds the thread; work a stopped replica left unfinished is
reported failed by the other one's sweep."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest

from agentd.backends.redis_cluster import RedisCluster
from agentd.backends.redis_coordination import RedisCoordination
from agentd.backends.redis_storage import RedisStorage
from agentd.grpc.server import AgentdServer
from agentd.runtime import Agent, AgentRegistry
from agentd.runtime.host import Host
from agentd.runtime.storage import BackgroundTask, StorageError
from agentd.runtime.threads import ThreadSettings
from agentd_proto.v1 import agent_service_pb2 as apb
from redis_server import RedisServer
from support.background import World, agents, calls, finishes, follow, options, stored_results, stream, tags
from support.disguise import Disguise
from support.polling import until
from support.server import Running


@pytest.fixture
async def replicas(redis_server: RedisServer) -> AsyncIterator[tuple[World, Callable[[], Any]]]:
    world = World()
    prefix = f"bg-{uuid.uuid4().hex[:8]}:"
    made: list[Running] = []

    async def make() -> Running:
        url = redis_server.url
        storage = RedisStorage(url, key_prefix=f"{prefix}store:")
        host = Host(
            agents=AgentRegistry(agents(world, storage)),
            storage=storage,
            coordination=RedisCoordination(url, key_prefix=f"{prefix}lease:"),
            cluster=RedisCluster(url, key_prefix=f"{prefix}cluster:"),
            thread_settings=ThreadSettings(lease_ttl_ms=600, sweep_interval=0.1),
        )
        server = AgentdServer(host, dispatch_interval=0)
        addr = f"127.0.0.1:{await server.start('127.0.0.1:0')}"
        running = Running(server, addr, grpc.aio.insecure_channel(addr))
        made.append(running)
        return running

    try:
        yield world, make
    finally:
        world.gate.set()
        for running in made:
            await running.close()


async def test_the_continuation_runs_on_the_replica_that_holds_the_thread(
    replicas: tuple[World, Callable[[], Any]],
) -> None:
    world, make = replicas
    a, b = await make(), await make()
    following = await follow(b, world)
    await stream(a, "worker", options(calls(("c1", "report", {"wait": True, "topic": "far"})), {"text": "started"}))
    # B holds the thread now, with a run that takes a while.
    slow = options({"deltas": [f"w{i} " for i in range(80)], "delayMs": 25})
    held = b.agents.Stream(apb.StreamRequest(agent_id="plain", text="hold it", options=slow))
    first = await held.read()
    held_run = first.chunks[0].run_id
    world.gate.set()  # the work ends on A, while B's run holds the thread
    while await held.read() is not grpc.aio.EOF:
        pass
    await until(
        lambda: "background-task-completed" in tags(world.seen) and finishes(world.seen) >= 3,
        what="the thread woken by the completed work",
    )
    following.cancel()
    (echo,) = [
        c
        for c in world.seen
        if c.WhichOneof("payload") == "signal" and c.signal.signal.tag_name == "background-task-completed"
    ]
    # Queued behind B's run and started by B, the thread's holder.
    runs = [c.run_id for c in world.seen if c.WhichOneof("payload") == "start"]
    assert runs.index(echo.run_id) > runs.index(held_run)
    await asyncio.wait_for(b.host.runs.wait_finished(echo.run_id), 5)
    assert (await stored_results(a))["c1"] == ({"report": "REPORT-far"}, False)


async def test_work_a_stopped_replica_left_is_reported_failed_by_another(
    replicas: tuple[World, Callable[[], Any]],
) -> None:
    _, make = replicas
    a, b = await make(), await make()
    await stream(a, "worker", options(calls(("c1", "report", {"wait": True})), {"text": "started"}))
    assert len(a.host.background) == 1
    await a.close()  # stops with the work unfinished: its record stays, its lease goes

    async def reported() -> Any:
        result, is_error = (await stored_results(b))["c1"]
        return is_error and "stopped before the background work finished" in result

    await until(reported, what="the stopped work reported to the thread")
    await until(  # deleted once the thread was woken
        b.host.storage.list_background_tasks, holds=lambda tasks: tasks == [], what="the task record deleted"
    )


class DisguisedStorage(RedisStorage):
    """Redis storage whose listing of background work, once told to, waits and,
    cancelled there, fails as its client may (a connection error, or that
    wrapped as a storage error)."""

    def __init__(self, url: str, disguise: Disguise, **kwargs: Any) -> None:
        super().__init__(url, **kwargs)
        self.disguise = disguise
        self.failing = False

    async def list_background_tasks(self) -> list[BackgroundTask]:
        if self.failing:
            await self.disguise.wait()
        return await super().list_background_tasks()


@pytest.mark.parametrize(
    "error", [StorageError("connection reset"), OSError("connection reset")], ids=["storage", "other"]
)
async def test_the_background_sweep_stops_with_the_server_though_its_storage_turns_the_cancel_into_an_error(
    redis_server: RedisServer, error: Exception
) -> None:
    # (It logged the error and went on sweeping, every interval, after the server stopped.)
    disguise = Disguise(error)
    url, prefix = redis_server.url, f"sweep-{uuid.uuid4().hex[:8]}:"
    storage = DisguisedStorage(url, disguise, key_prefix=f"{prefix}store:")
    host = Host(
        agents=AgentRegistry([Agent(id="quiet")]),
        storage=storage,
        coordination=RedisCoordination(url, key_prefix=f"{prefix}lease:"),
        cluster=RedisCluster(url, key_prefix=f"{prefix}cluster:"),
        thread_settings=ThreadSettings(lease_ttl_ms=600, sweep_interval=0.05),
    )
    server = AgentdServer(host, dispatch_interval=0)
    addr = f"127.0.0.1:{await server.start('127.0.0.1:0')}"
    running = Running(server, addr, grpc.aio.insecure_channel(addr))
    try:
        storage.failing = True
        await asyncio.wait_for(disguise.waiting.wait(), 10)  # a sweep waits on storage
    finally:
        await running.close()
    assert disguise.raised.is_set()
    await until(sweepers, holds=lambda left: not left, what="the background sweeper to stop")


def sweepers() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name() == "background sweeper" and not t.done()]
