"""Three `agentd serve` replicas on one real redis-server (storage, leases,
shared chunk logs and the cache all on it, with an append-only file) that is
SIGKILLed while runs are in flight on every replica, and started again.

What happens to a run in flight: its replica cannot renew the thread's lease,
so once the lease would have expired unconfirmed the run is aborted with
reason LEASE_LOST (no two replicas may drive a thread). Its chunks cannot
reach the shared log while Redis is down, so subscribers see the end once
Redis is back: the abort chunk, or, where that too could not be logged, the
REPLICA_LOST abort a sweep writes for a run still marked in flight. The
aborted run saved nothing; its acknowledged message is still in the outbox and
a sweep replays it once on some replica."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, signal_service_pb2_grpc
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from e2e.serverproc import ServerProcess, start_server
from redis_server import RedisServer, running_redis_server
from support.errors import rich_error
from support.health import NOT_SERVING, SERVING, all_health
from support.polling import until

from .harness import (
    Sent,
    Subscription,
    decision,
    kind,
    settle,
    stored,
    thread_problems,
)

pytestmark = pytest.mark.timeout(150)

TTL_MS = 1000

CONFIG = """
[server]
health_probe_seconds = 0.2

[coordination]
backend = "redis"
redis_url = "{url}"
lease_ttl_ms = {ttl}
key_prefix = "faults-lease:"
cluster_key_prefix = "faults-cluster:"

[storage]
key_prefix = "faults-store:"

[cache]
key_prefix = "faults-cache:"

[[agents]]
id = "chat"
model = "local/echo"
memory = {{ last_messages = 20 }}

[[agents]]
id = "slow"
model = "local/echo"
memory = {{ last_messages = 20 }}
default_options = {{ provider_options = {{ local = {{ delayMs = 150 }} }} }}
"""

NAMES = ("a", "b", "c")
THREADS = 6
#: The slow agent echoes this word by word, 150 ms a word: about 2.5 s in flight.
WORDS = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen"
#: How a run in flight when Redis died may end (every other run finishes).
FAILED_ENDS = {("abort", "LEASE_LOST"), ("abort", "REPLICA_LOST"), ("error", "STORAGE_UNAVAILABLE")}
#: What a call refused while Redis is down says (all UNAVAILABLE, with a RetryInfo).
OUTAGE_REASONS = {"STORAGE_UNAVAILABLE", "COORDINATION_UNAVAILABLE", "CLUSTER_UNAVAILABLE"}


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    yield from running_redis_server(persistent=True)


@pytest.fixture
def replicas(redis: RedisServer, tmp_path: Path) -> Iterator[dict[str, ServerProcess]]:
    config = tmp_path / "agentd.toml"
    config.write_text(CONFIG.format(url=redis.url, ttl=TTL_MS))
    servers = {name: start_server(config=config, log_dir=tmp_path / name) for name in NAMES}
    try:
        for server in servers.values():
            server.wait_serving(timeout=30)
        yield servers
    finally:
        for server in servers.values():
            server.stop()


async def send(addr: str, sent: Sent, agent: str = "slow") -> Sent:
    async with grpc.aio.insecure_channel(addr) as channel:
        try:
            reply = await signal_service_pb2_grpc.SignalServiceStub(channel).SendMessage(
                sspb.SendMessageRequest(
                    agent_id=agent,
                    target=spb.SignalTarget(resource_id="u1", thread_id=sent.thread_id),
                    message=spb.MessageInput(id=sent.message_id, text=sent.text),
                ),
                timeout=15,
            )
        except grpc.aio.AioRpcError as error:
            sent.failed = rich_error(error)
            return sent
    sent.action, sent.run_id = decision(reply)
    return sent


async def test_runs_in_flight_when_redis_dies_end_and_every_replica_serves_again(
    redis: RedisServer, replicas: dict[str, ServerProcess]
) -> None:
    addrs = {name: server.addr for name, server in replicas.items()}
    tag = uuid.uuid4().hex[:6]
    threads = [f"rep-{tag}-{i}" for i in range(THREADS)]
    # Each thread is watched on the replica after the one its first run starts on.
    watchers = {t: Subscription(addrs[NAMES[(i + 1) % 3]], t) for i, t in enumerate(threads)}
    sent: list[Sent] = []

    def message(i: int, n: int, text: str) -> tuple[str, Sent]:
        thread = threads[i]
        return NAMES[(i + n) % 3], Sent(thread, f"{thread}-m{n}", f"{thread} {text}")

    async def send_round(n: int, text: str) -> list[Sent]:
        batch = [message(i, n, text) for i in range(THREADS)]
        sent.extend(s for _, s in batch)
        return list(await asyncio.gather(*(send(addrs[name], s) for name, s in batch)))

    try:
        for watcher in watchers.values():
            await asyncio.wait_for(watcher.subscribed.wait(), 10)
        in_flight = await send_round(1, WORDS)  # a run on every replica, two each
        assert all(s.action == "wake" for s in in_flight), in_flight
        await until(
            lambda: all(any(kind(c) == "text_delta" for c in watchers[s.thread_id].of(s.run_id)) for s in in_flight),
            within=10,
            what="every run streaming",
        )

        redis.kill()
        killed_at = time.monotonic()
        refused = await send_round(2, "while redis is down")
        for s in refused:
            assert s.failed is not None, s  # nothing is acknowledged while Redis is down
            assert s.failed.code == grpc.StatusCode.UNAVAILABLE and s.failed.reason in OUTAGE_REASONS, s
            assert s.failed.retry_delay is not None and s.failed.retry_delay > 0, s
        for addr in addrs.values():
            await until(lambda a=addr: all_health(a, NOT_SERVING), within=10, what=f"{addr} NOT_SERVING")  # type: ignore[misc]
        # Past the leases' lifetime: no lease held when Redis died can have been renewed.
        await asyncio.sleep(max(0.0, killed_at + 1.5 * TTL_MS / 1000 - time.monotonic()))
        redis.start()
        for addr in addrs.values():
            await until(lambda a=addr: all_health(a, SERVING), within=20, what=f"{addr} SERVING again")  # type: ignore[misc]

        # Every run in flight ends, with a reason.
        await until(
            lambda: all(watchers[s.thread_id].end_of(s.run_id) is not None for s in in_flight),
            within=20,
            what="every run in flight to end",
        )
        for s in in_flight:
            end = watchers[s.thread_id].end_of(s.run_id)
            assert end is not None and (kind(end), end.abort.reason or end.error.reason) in FAILED_ENDS, end

        # No thread is left held by nobody: a message to every thread, through another replica, is run.
        after = await send_round(3, "after")
        for s in after:
            assert s.failed is None and s.action in ("wake", "deliver"), s
        await until(
            lambda: all(
                (end := watchers[s.thread_id].end_of(s.run_id)) is not None and kind(end) == "finish" for s in after
            ),
            within=20,
            what="the messages sent afterwards to be run",
        )

        # Nothing acknowledged was lost or run twice (a run cut short is replayed once, by a sweep).
        async def problems() -> list[str]:
            found = []
            for thread in threads:
                messages = await stored(addrs["a"], thread)
                mine = [s for s in sent if s.thread_id == thread]
                found += thread_problems(messages, watchers[thread], mine, failed_ends=FAILED_ENDS)
            return found

        await settle(problems, 20, "storage after the outage")
    finally:
        for watcher in watchers.values():
            await watcher.close()

    # Every replica serves again without a restart.
    for name, addr in addrs.items():
        assert replicas[name].proc.poll() is None
        options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id=f"rep-{tag}-gen-{name}"))
        async with grpc.aio.insecure_channel(addr) as channel:
            reply = await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                apb.GenerateRequest(agent_id="chat", text=f"hello {name}", options=options), timeout=10
            )
        assert reply.text == f"hello {name}"
