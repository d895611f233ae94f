"""A takeover that storage fails half-way, on a replica (leases on a real
Redis): the replica holds the thread's lease for the takeover, then cannot read
the outbox. It lets the lease go, so the thread is not left held by a takeover
that never happens, and the next sweep replays the signal once storage answers."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from agentd.backends.redis_cluster import RedisCluster
from agentd.backends.redis_coordination import RedisCoordination
from agentd.backends.redis_storage import RedisStorage
from agentd.runtime import Agent, AgentRegistry
from agentd.runtime.host import Host
from agentd.runtime.memory import Memory
from agentd.runtime.signals import create_message_signal
from agentd.runtime.storage import PendingSignal, StorageError
from agentd.runtime.threads import LeasedOwnership, ThreadSettings
from redis_server import RedisServer
from support.polling import until

pytestmark = pytest.mark.timeout(30)


class OutboxUnreadable(RedisStorage):
    """Redis storage whose outbox cannot be read the next `failures` times."""

    unreadable = 0

    async def list_pending(self) -> list[PendingSignal]:
        if self.unreadable:
            self.unreadable -= 1
            raise StorageError("list_pending: connection refused")
        return await super().list_pending()


@pytest.fixture
async def replica(redis_server: RedisServer) -> AsyncIterator[Host]:
    prefix = f"takeover-{uuid.uuid4().hex[:8]}:"
    storage = OutboxUnreadable(redis_server.url, key_prefix=f"{prefix}store:")
    host = Host(
        agents=AgentRegistry([Agent(id="chat", model="local/echo", memory=Memory(storage))]),
        storage=storage,
        coordination=RedisCoordination(redis_server.url, key_prefix=f"{prefix}lease:"),
        cluster=RedisCluster(redis_server.url, key_prefix=f"{prefix}cluster:"),
        thread_settings=ThreadSettings(lease_ttl_ms=600, sweep_interval=60),  # the test sweeps
    )
    await host.open()
    try:
        yield host
    finally:
        await host.runs.shutdown(0)
        await host.threads.shutdown()
        await host.close()


async def test_a_takeover_whose_outbox_read_fails_lets_the_thread_go_and_a_later_sweep_replays(
    replica: Host,
) -> None:
    storage = replica.storage
    assert isinstance(storage, OutboxUnreadable)
    signal = create_message_signal("left behind")  # acknowledged by a replica that died since
    storage.unreadable = 1
    with pytest.raises(StorageError):
        await replica.threads.take_over("u1", "t1", None)
    assert replica.threads.ownership.current_run("t1") is None
    assert await replica.coordination.owner("t1") is None  # not held by a takeover that is not happening
    assert len(replica.threads) == 0

    await storage.save_pending(PendingSignal(signal, "chat", "u1", "t1"))
    ownership = replica.threads.ownership
    assert isinstance(ownership, LeasedOwnership)
    assert await ownership.sweep() == 1  # a later sweep takes the thread over

    async def replayed() -> bool:
        return [m.id for m in await storage.last_messages("t1", 10) if m.role == "signal"] == [signal.id]

    await until(replayed, within=10, what="the replayed run to save")
    await until(lambda: len(replica.threads) == 0, within=5, what="the thread idle again")
    assert await storage.list_pending() == []
    assert [m.text for m in await storage.last_messages("t1", 10) if m.role == "assistant"] == ["left behind"]
