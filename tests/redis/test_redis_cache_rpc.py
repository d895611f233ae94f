"""The response cache on Redis over a real server: answers come from Redis,
and a Redis that goes away makes live calls, not failed runs."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from agentd.backends.redis_cache import RedisServerCache
from agentd.runtime import Agent, ExecutionOptions
from agentd.runtime.cache import InMemoryServerCache
from agentd.runtime.processors.builtins.response_cache import ResponseCache
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import cache_service_pb2 as cpb
from redis_server import RedisServer
from support.errors import rich_error
from support.server import start_server


async def test_response_cache_on_redis_survives_redis_going_away(
    redis_server: RedisServer, model_calls: list[Any]
) -> None:
    redis = RedisServerCache(url=redis_server.url, key_prefix="agentd-test:rpc:", socket_timeout=0.5)
    await redis.clear()
    script = {"local": {"script": [{"text": "from the model"}]}}
    agent = Agent(
        id="r",
        model="local/scripted",
        input_processors=[ResponseCache(redis, agent_id="r")],
        default_options=ExecutionOptions(provider_options=script),
    )
    running = await start_server(
        [agent], caches={"memory": InMemoryServerCache(), "redis": redis}, cache_backend="redis"
    )
    try:
        request = apb.GenerateRequest(agent_id="r", text="q")
        assert (await running.agents.Generate(request)).text == "from the model"
        assert (await running.agents.Generate(request)).text == "from the model"
        assert len(model_calls) == 1  # the second answer came from Redis
        stats = await running.cache.GetCacheStats(cpb.GetCacheStatsRequest())
        assert (stats.backend, stats.hits, stats.errors) == ("redis", 1, 0)
        redis_server.stop()
        try:
            reply = await running.agents.Generate(request)  # the cache fails: a live call, not a failed run
            assert reply.text == "from the model" and len(model_calls) == 2
            assert redis.stats.errors >= 1
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await running.cache.GetCacheStats(cpb.GetCacheStatsRequest())
            assert rich_error(info.value).reason == "CACHE_UNAVAILABLE"
        finally:
            redis_server.start()
        assert (await running.agents.Generate(request)).text == "from the model"
    finally:
        await running.close()
