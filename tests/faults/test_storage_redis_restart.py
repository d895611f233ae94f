"""Storage on a real Redis that is SIGKILLed mid-load and started again on the
same port (with an append-only file, so what it acknowledged survives), under
one `agentd serve` process that is never restarted.

Senders keep sending messages to several threads, one run per message. Every
message answered OK is stored once, with one reply, after recovery; every
refusal is UNAVAILABLE STORAGE_UNAVAILABLE with a RetryInfo; health follows the
outage and comes back by itself; the server answers again."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from e2e.serverproc import ServerProcess, start_server
from redis_server import RedisServer

from .harness import (
    NOT_SERVING,
    SERVING,
    TERMINAL,
    Senders,
    Subscription,
    all_health,
    failure,
    is_storage_unavailable,
    kind,
    until,
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


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    server = RedisServer.start_new(persistent=True)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def agentd(redis: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    config = tmp_path / "agentd.toml"
    config.write_text(CONFIG.format(url=redis.url))
    server = start_server(config=config, log_dir=tmp_path)
    try:
        server.wait_serving(timeout=30)
        yield server
    finally:
        server.stop()


async def stored(addr: str, thread_id: str) -> list[tpb.Message]:
    async with grpc.aio.insecure_channel(addr) as channel:
        listed = await thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
            tpb.ListMessagesRequest(thread_id=thread_id, page_size=1000), timeout=10
        )
    return list(listed.messages)


async def storage_problems(addr: str, threads: list[str], senders: Senders) -> list[str]:
    """What storage says against what was answered and what the subscribers saw, per thread:
    - every acknowledged message is stored, nothing refused is (nor seen in a run);
    - the replies stored are exactly one per run that finished (the echo answers the last
      message it took), plus one per run that saved and then failed, its messages then
      taken by no other run: nothing ran twice, nothing was lost."""
    problems = []
    texts = {s.message_id: s.text for s in senders.sent}
    for thread in threads:
        messages = await stored(addr, thread)
        signals = {m.id for m in messages if m.role == 4}
        replies = Counter(m.parts[0].text.text for m in messages if m.role == 2)
        for sent in (s for s in senders.acknowledged() if s.thread_id == thread):
            if sent.message_id not in signals:
                ends = [
                    (kind(c), c.error.reason) for c in senders.watchers[thread].of(sent.run_id) if kind(c) in TERMINAL
                ]
                problems.append(f"{sent.message_id} answered {sent.action} is not stored (its run: {ends})")
        watcher = senders.watchers[thread]
        took: dict[str, list[str]] = {}
        for chunk in watcher.chunks:
            if kind(chunk) == "signal":
                took.setdefault(chunk.run_id, []).append(chunk.signal.signal.id)
        ends = {run_id: watcher.end_of(run_id) for run_id in took}
        for sent in (s for s in senders.refused() if s.thread_id == thread):
            # A wake whose run failed in set-up is refused: that run's start is seen, and its error.
            seen = [ends[r] for r, ids in took.items() if sent.message_id in ids]
            if sent.message_id in signals or any(e is None or kind(e) == "finish" for e in seen):
                problems.append(f"{sent.message_id} was refused ({sent.failed}) but is stored or was run")
        finished = {r for r, end in ends.items() if end is not None and kind(end) == "finish"}
        taken_by_finished = {i for r in finished for i in took[r]}
        expected = Counter(texts[took[r][-1]] for r in finished)
        for run_id, end in ends.items():
            if end is None:
                problems.append(f"run {run_id} ({took[run_id]}) has not ended")
            elif kind(end) != "finish":
                if (kind(end), end.error.reason) != ("error", "STORAGE_UNAVAILABLE"):
                    problems.append(f"run {run_id} ({took[run_id]}) ended with {end}")
                elif not taken_by_finished & set(took[run_id]) and took[run_id][-1] in signals:  # saved, then failed
                    expected[texts[took[run_id][-1]]] += 1
        if replies != expected:
            problems.append(f"{thread}: replies {sorted(replies.elements())} != expected {sorted(expected.elements())}")
    return problems


async def generate_during_the_outage(addr: str) -> None:
    """A thread-bound Generate is refused, retryably; an agent without memory needs no storage."""
    async with grpc.aio.insecure_channel(addr) as channel:
        agents = agent_service_pb2_grpc.AgentServiceStub(channel)
        options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="store-generate"))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await agents.Generate(apb.GenerateRequest(agent_id="chat", text="no", options=options), timeout=10)
        assert is_storage_unavailable(failure(refused.value)), failure(refused.value)
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
        await until(lambda: len(senders.acknowledged()) >= 3 * THREADS, 20, "messages answered before the outage")

        redis.kill()
        killed_at = len(senders.sent)
        await until(lambda: all_health(addr, NOT_SERVING), 10, "health NOT_SERVING while Redis is down")
        await until(lambda: len(senders.refused()) >= THREADS, 20, "messages refused during the outage")
        await generate_during_the_outage(addr)

        redis.start()
        await until(lambda: all_health(addr, SERVING), 10, "health SERVING once Redis is back")
        after = len(senders.acknowledged())
        await until(lambda: len(senders.acknowledged()) >= after + 2 * THREADS, 20, "messages answered afterwards")
        senders.stop.set()
        await asyncio.wait_for(load, 30)  # each sender waits for its last run to end

        assert killed_at < len(senders.sent)
        for refused in senders.refused():
            assert refused.failed is not None and is_storage_unavailable(refused.failed), refused
        acknowledged = senders.acknowledged()
        assert {s.action for s in acknowledged} <= {"wake", "deliver"}

        # Every acknowledged message is stored once, with one reply (a run the outage cut short is
        # run again once Redis answers: poll for that), and nothing refused is stored.
        problems: list[str] = []

        async def settled() -> bool:
            problems[:] = await storage_problems(addr, threads, senders)
            return not problems

        try:
            await until(settled, 20, "every acknowledged message stored once, nothing refused stored")
        except AssertionError:
            raise AssertionError("\n".join(problems[:10])) from None

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
