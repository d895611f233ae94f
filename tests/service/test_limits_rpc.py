"""Bounds a caller meets: a unary reply never exceeds [server]
max_message_bytes (RESOURCE_EXHAUSTED RESPONSE_TOO_LARGE, pointing to
Stream), and the memory cache refuses a value bigger than it may hold."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf import struct_pb2

from agentd.runtime import Agent
from agentd.runtime.cache import InMemoryServerCache
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import cache_service_pb2 as cpb
from support.errors import rich_error
from support.server import Running, start_server

LIMIT = 256 * 1024


@pytest.fixture
async def limited() -> AsyncIterator[Running]:
    running = await start_server(
        [Agent(id="echo")],
        caches={"memory": InMemoryServerCache(max_bytes=LIMIT // 2)},
        max_message_bytes=LIMIT,
    )
    try:
        yield running
    finally:
        await running.channel.close()
        await running.server.stop(0)


async def test_a_reply_over_the_limit_is_resource_exhausted_and_stream_still_works(limited: Running) -> None:
    text = " ".join(["word"] * 20_000)  # ~100 KB in, repeated in text, steps and messages: over 256 KiB out
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await limited.agents.Generate(apb.GenerateRequest(agent_id="echo", text=text))
    assert failed.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert rich_error(failed.value).reason == "RESPONSE_TOO_LARGE" and "Stream" in (failed.value.details() or "")
    streamed = ""
    async for message in limited.agents.Stream(apb.StreamRequest(agent_id="echo", text=text)):
        for chunk in message.chunks:
            if chunk.HasField("text_delta"):
                streamed += chunk.text_delta.text
    assert streamed == text
    small = await limited.agents.Generate(apb.GenerateRequest(agent_id="echo", text="still fine"))
    assert small.text == "still fine"


async def test_the_memory_cache_refuses_a_value_bigger_than_it_holds(limited: Running) -> None:
    big = struct_pb2.Value(string_value="x" * (LIMIT * 3 // 4))  # fits the message, not the cache
    await limited.cache.SetCacheEntry(cpb.SetCacheEntryRequest(key="fits", value=struct_pb2.Value(string_value="y")))
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await limited.cache.SetCacheEntry(cpb.SetCacheEntryRequest(key="big", value=big))
    assert failed.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert rich_error(failed.value).reason == "CACHE_ENTRY_TOO_LARGE"
    got = await limited.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key="fits"))
    assert got.found and got.value.string_value == "y"
