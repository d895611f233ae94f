"""The server cache on a real Redis that is SIGKILLed under load and started
again on the same port, under one `agentd serve` process: a response-cache
agent keeps answering (the cache fails open: a failed read is a live call),
health stays SERVING (storage is elsewhere), and once Redis is back hits
resume by themselves."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, cache_service_pb2_grpc
from agentd_proto.v1 import cache_service_pb2 as cpb
from e2e.serverproc import ServerProcess, served, start_server
from redis_server import RedisServer, running_redis_server
from support.health import SERVING, health
from support.polling import until

pytestmark = pytest.mark.timeout(90)

CONFIG = """
[cache]
backend = "redis"
redis_url = "{url}"
key_prefix = "faults-cache:"
socket_timeout = 1.0

[storage]
backend = "memory"

[[agents]]
id = "cached-echo"
model = "local/echo"
input_processors = [
  {{ name = "response-cache", options = {{ backend = "redis", ttl = 600, agentId = "cached-echo" }} }},
]
"""

CALLERS = 8


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    yield from running_redis_server()  # no persistence: a restarted cache is empty


@pytest.fixture
def agentd(redis: RedisServer, tmp_path: Path) -> Iterator[ServerProcess]:
    config = tmp_path / "agentd.toml"
    config.write_text(CONFIG.format(url=redis.url))
    yield from served(start_server(config=config, log_dir=tmp_path))


async def stats(addr: str) -> cpb.GetCacheStatsResponse | None:
    async with grpc.aio.insecure_channel(addr) as channel:
        try:
            reply: cpb.GetCacheStatsResponse = await cache_service_pb2_grpc.CacheServiceStub(channel).GetCacheStats(
                cpb.GetCacheStatsRequest(), timeout=5
            )
        except grpc.aio.AioRpcError:
            return None
        return reply


async def test_generate_fails_open_while_the_cache_redis_is_down_and_hits_resume_after(
    redis: RedisServer, agentd: ServerProcess
) -> None:
    addr = agentd.addr
    answered: list[tuple[str, str]] = []  # (phase, outcome)
    phase = "before"
    stop = asyncio.Event()

    async def caller(n: int) -> None:
        async with grpc.aio.insecure_channel(addr) as channel:
            agents = agent_service_pb2_grpc.AgentServiceStub(channel)
            i = 0
            while not stop.is_set():
                text = f"question {n}-{i % 3}"  # repeats: hits while the cache answers
                i += 1
                at = phase
                try:
                    reply = await agents.Generate(apb.GenerateRequest(agent_id="cached-echo", text=text), timeout=10)
                except grpc.aio.AioRpcError as error:
                    answered.append((at, f"{error.code().name}: {error.details()}"))
                    continue
                answered.append((at, "ok" if reply.text == text else f"wrong answer {reply.text!r}"))

    callers = asyncio.gather(*(caller(n) for n in range(CALLERS)))
    try:
        await until(lambda: len(answered) >= 5 * CALLERS, within=20, what="answers before the outage")
        before = await stats(addr)
        assert before is not None and before.hits > 0 and before.backend == "redis"

        redis.kill()
        phase = "down"
        count = len(answered)
        await until(lambda: len(answered) >= count + 5 * CALLERS, within=20, what="answers while the cache is down")
        assert await health(addr) == SERVING
        assert await health(addr, "agentd.v1.AgentService") == SERVING

        redis.start()
        phase = "after"
        await until(
            lambda: len([a for a in answered if a[0] == "after"]) >= 5 * CALLERS, within=20, what="answers afterwards"
        )

        async def hits_again() -> bool:
            now = await stats(addr)  # counters live in Redis: a restarted one counts from zero
            return now is not None and now.hits > 0

        await until(hits_again, within=20, what="cache hits after Redis is back")
    finally:
        stop.set()
        await asyncio.wait_for(callers, 30)

    failures = [a for a in answered if a[1] != "ok"]
    assert failures == [], failures[:5]
    assert {p for p, _ in answered} == {"before", "down", "after"}
    assert agentd.proc.poll() is None
