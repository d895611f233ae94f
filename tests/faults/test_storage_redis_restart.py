"""Storage on a real Redis that is SIGKILLed mid-load and started again on the
same port (with an append-only file, so what it acknowledged survives), under
one `agentd serve` process that is never restarted.

Senders keep sending messages (SendMessage and QueueMessage in turn) to
several threads, each waiting for the run it woke. Every message answered OK
is stored once, and answered once, after recovery; every
refusal is UNAVAILABLE STORAGE_UNAVAILABLE with a RetryInfo; health follows the
outage and comes back by itself; the server answers again."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from agentd_proto.v1 import options_pb2 as opb
from e2e.serverproc import ServerProcess, served, start_server
from redis_server import RedisServer, running_redis_server
from support.errors import rich_error
from support.health import NOT_SERVING, SERVING, all_health
from support.polling import until

from .harness import (
    Senders,
    Subscription,
    is_storage_unavailable,
    settle,
    stored,
    thread_problems,
)

pytestmark = pytest.mark.timeout(120)

CONFIG = """
[server]
health_probe_seconds = 0.1

[storage]
backend = "redis"
redis_url = "{url}"
key_prefix = "faults-store:"

[[agents]]
id = "chat"
model = "local/echo"
memory = {{ last_messages = 20 }}

[[agents]]
id = "echo"
model = "local/echo"
"""

THREADS = 6
#: How a run the outage cut short ends (every other run finishes).
FAILED_ENDS = {("error", "STORAGE_UNAVAILABLE")}


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    yield from running_redis_server(persistent=True)


@pytest.fixture
def agentd(redis: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    config = tmp_path / "agentd.toml"
    config.write_text(CONFIG.format(url=redis.url))
    yield from served(start_server(config=config, log_dir=tmp_path))


async def storage_problems(addr: str, threads: list[str], senders: Senders) -> list[str]:
    problems = []
    for thread in threads:
        sent = [s for s in senders.sent if s.thread_id == thread and (s.failed is not None or s.action)]
        messages = await stored(addr, thread)
        problems += thread_problems(messages, senders.watchers[thread], sent, failed_ends=FAILED_ENDS)
    return problems


async def generate_during_the_outage(addr: str) -> None:
    """A thread-bound Generate is refused, retryably; an agent without memory needs no storage."""
    async with grpc.aio.insecure_channel(addr) as channel:
        agents = agent_service_pb2_grpc.AgentServiceStub(channel)
        options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="store-generate"))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await agents.Generate(apb.GenerateRequest(agent_id="chat", text="no", options=options), timeout=10)
        assert is_storage_unavailable(rich_error(refused.value)), rich_error(refused.value)
        reply = await agents.Generate(apb.GenerateRequest(agent_id="echo", text="no storage needed"), timeout=10)
        assert reply.text == "no storage needed"


async def test_storage_redis_sigkilled_and_restarted_mid_load_loses_nothing_acknowledged(
    redis: RedisServer, agentd: ServerProcess
) -> None:
    addr = agentd.addr
    threads = [f"store-t{i}" for i in range(THREADS)]
    watchers = {t: Subscription(addr, t) for t in threads}
    senders = Senders(addr, "chat", threads, watchers)
    try:
        for watcher in watchers.values():
            await asyncio.wait_for(watcher.subscribed.wait(), 10)
        load = senders.start()
        await until(
            lambda: len(senders.acknowledged()) >= 3 * THREADS, within=20, what="messages answered before the outage"
        )

        redis.kill()
        killed_at = len(senders.sent)
        await until(lambda: all_health(addr, NOT_SERVING), within=10, what="health NOT_SERVING while Redis is down")
        await until(lambda: len(senders.refused()) >= THREADS, within=20, what="messages refused during the outage")
        await generate_during_the_outage(addr)

        redis.start()
        await until(lambda: all_health(addr, SERVING), within=10, what="health SERVING once Redis is back")
        after = len(senders.acknowledged())
        await until(
            lambda: len(senders.acknowledged()) >= after + 2 * THREADS, within=20, what="messages answered afterwards"
        )
        senders.stop.set()
        await asyncio.wait_for(load, 30)  # each sender waits for its last run to end

        assert killed_at < len(senders.sent)
        for refused in senders.refused():
            assert refused.failed is not None and is_storage_unavailable(refused.failed), refused
        acknowledged = senders.acknowledged()
        assert {s.action for s in acknowledged} <= {"wake", "deliver"}

        # Every acknowledged message is stored once, with its replies once (a run the outage cut
        # short is run again once Redis answers: poll for that), and nothing refused is stored.
        await settle(lambda: storage_problems(addr, threads, senders), 20, "storage after the outage")
    finally:
        senders.stop.set()
        for watcher in watchers.values():
            await watcher.close()

    # The server serves again without a restart: a thread-bound Generate is answered.
    options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="store-after"))
    async with grpc.aio.insecure_channel(addr) as channel:
        reply = await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
            apb.GenerateRequest(agent_id="chat", text="still here", options=options), timeout=10
        )
    assert reply.text == "still here"
    assert agentd.proc.poll() is None
