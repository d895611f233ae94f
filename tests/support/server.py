"""An agentd server in-process on a loopback port, with stubs for its services.

running = await start_server(agents, storage=storage)   # the Host's parts, all optional
...
await running.close()

async with serving(agents) as running:                   # the same, closed on the way out
    ...
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from agentd import config
from agentd.grpc.server import AgentdServer
from agentd.runtime import Agent, AgentRegistry, InMemoryScoreStore, ScoringSettings
from agentd.runtime.cache import InMemoryServerCache
from agentd.runtime.host import Host
from agentd.runtime.mcp_tools import McpServers
from agentd.runtime.notifications.store import InMemoryNotificationStore
from agentd.runtime.overrides import InMemoryOverrideStore
from agentd.runtime.processors.catalogue import default_registry
from agentd.runtime.run import RunHandle, RunResult
from agentd.runtime.storage import InMemoryStorage
from agentd.runtime.threads import ThreadSettings
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import (
    agent_service_pb2_grpc,
    cache_service_pb2_grpc,
    signal_service_pb2_grpc,
    thread_service_pb2_grpc,
)
from support.polling import until
from support.processors import HeldAfterRun

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Running:
    server: AgentdServer
    addr: str
    channel: grpc.aio.Channel

    @property
    def host(self) -> Host:
        return self.server.host

    @property
    def agents(self) -> agent_service_pb2_grpc.AgentServiceStub:
        return agent_service_pb2_grpc.AgentServiceStub(self.channel)

    @property
    def threads(self) -> thread_service_pb2_grpc.ThreadServiceStub:
        return thread_service_pb2_grpc.ThreadServiceStub(self.channel)

    @property
    def signals(self) -> signal_service_pb2_grpc.SignalServiceStub:
        return signal_service_pb2_grpc.SignalServiceStub(self.channel)

    @property
    def cache(self) -> cache_service_pb2_grpc.CacheServiceStub:
        return cache_service_pb2_grpc.CacheServiceStub(self.channel)

    async def close(self) -> None:
        """Closes the test's channel, then stops the server at once (no grace)."""
        await self.channel.close()
        await self.server.stop(grace=0)


def default_agents() -> list[Agent]:
    return list(config.load(ROOT / "agentd.toml", env={}).agents)


async def start_server(
    agents: Sequence[Agent] | None = None,
    *,
    processors: dict[str, Any] | None = None,
    step_functions: dict[str, Any] | None = None,
    caches: dict[str, Any] | None = None,
    cache_backend: str = "memory",
    storage: Any = None,
    thread_settings: ThreadSettings | None = None,
    prices: dict[str, Any] | None = None,
    score_store: Any = None,
    scoring_settings: Any = None,
    mcp: McpServers | None = None,
    override_store: Any = None,
    overrides_cache_ttl: float | None = None,
    notification_store: Any = None,
    **kwargs: Any,
) -> Running:
    kwargs.setdefault("dispatch_interval", 0)  # tests step the notification dispatcher themselves
    host = Host(
        agents=AgentRegistry(default_agents() if agents is None else agents),
        processors=default_registry().extended(processors or {}),
        step_functions=dict(step_functions or {}),
        caches=caches or {"memory": InMemoryServerCache()},
        cache_backend=cache_backend,
        storage=storage or InMemoryStorage(),
        thread_settings=thread_settings or ThreadSettings(),
        prices=prices or {},
        score_store=score_store or InMemoryScoreStore(),
        scoring_settings=scoring_settings or ScoringSettings(),
        mcp=mcp or McpServers(),
        override_store=override_store or InMemoryOverrideStore(),
        notification_store=notification_store or InMemoryNotificationStore(),
    )
    if overrides_cache_ttl is not None:
        host.agents.overrides.cache_ttl = overrides_cache_ttl
    server = AgentdServer(host, **kwargs)
    port = await server.start("127.0.0.1:0")
    addr = f"127.0.0.1:{port}"
    return Running(server, addr, grpc.aio.insecure_channel(addr))


@asynccontextmanager
async def serving(agents: Sequence[Agent] | None = None, **kwargs: Any) -> AsyncIterator[Running]:
    """`start_server(agents, **kwargs)`, closed when the block ends."""
    running = await start_server(agents, **kwargs)
    try:
        yield running
    finally:
        await running.close()


async def in_flight(running: Running) -> RunHandle:
    """The server's one run in flight, once it started (polled: a Generate says
    nothing until its run ends)."""
    active = await until(running.host.runs.active, step=0.005, what="a run to start")
    return active[0]


async def left_once_ended(running: Running, held: HeldAfterRun, agent_id: str, *, stream: bool = False) -> RunHandle:
    """Calls `agent_id` (Generate, or Stream), whose `held` work for after the
    run holds, and cancels the call once that work began: the run, which has
    its result and is still going (checked), of a caller who left."""
    if stream:
        call: Any = running.agents.Stream(apb.StreamRequest(agent_id=agent_id, text="one two"))
    else:
        call = running.agents.Generate(apb.GenerateRequest(agent_id=agent_id, text="one two"))
    await held.began()
    handle = await in_flight(running)
    call.cancel()
    await asyncio.sleep(0.05)  # the server sees the caller go
    assert held.finished == [] and not handle.done
    return handle


async def ended(running: Running, handle: RunHandle) -> RunResult:
    """`handle`'s result once its run ended, checking the registry let it go."""
    await asyncio.wait_for(running.host.runs.wait_finished(handle.run_id), 10)
    assert running.host.runs.get(handle.run_id) is None
    return await handle.result()
