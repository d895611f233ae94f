"""The response cache and CacheService over a real server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, empty_pb2, struct_pb2

from agentd.runtime import Agent, ExecutionOptions
from agentd.runtime.cache import InMemoryServerCache
from agentd.runtime.processors.builtins.response_cache import ResponseCache
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import cache_service_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from support.clocks import Clock
from support.errors import rich_error
from support.server import Running, serving


@pytest.fixture
async def cached() -> AsyncIterator[tuple[Running, InMemoryServerCache, Clock]]:
    clock = Clock()
    cache = InMemoryServerCache(clock=clock)
    script = {
        "local": {
            "script": [
                {"reasoning": "hmm", "text": "Paris is the capital.", "usage": {"inputTokens": 9, "outputTokens": 4}}
            ]
        }
    }
    agents = [
        Agent(
            id="search",
            model="local/scripted",
            input_processors=[ResponseCache(cache, ttl=600, agent_id="search")],
            default_options=ExecutionOptions(provider_options=script),
        ),
    ]
    async with serving(agents, caches={"memory": cache}) as running:
        yield running, cache, clock


def shape(chunks: list[Any]) -> list[tuple[str, str]]:
    return [(c.WhichOneof("payload"), c.text_delta.text if c.HasField("text_delta") else "") for c in chunks]


async def stream(running: Running, request: apb.StreamRequest) -> list[Any]:
    return [c async for m in running.agents.Stream(request) for c in m.chunks]


async def test_second_identical_call_is_served_from_cache(cached: Any, model_calls: list[Any]) -> None:
    running, _, _ = cached
    request = apb.StreamRequest(agent_id="search", text="What is the capital of France?")
    first = await stream(running, request)
    second = await stream(running, request)
    assert len(model_calls) == 1
    assert shape(first) == shape(second)
    assert second[-1].finish.usage == first[-1].finish.usage
    assert second[-1].finish.finish_reason == first[-1].finish.finish_reason
    step_starts = [c.step_start for c in second if c.HasField("step_start")]
    assert not step_starts[0].HasField("start_time")  # no provider call happened
    generated = await running.agents.Generate(
        apb.GenerateRequest(agent_id="search", text="What is the capital of France?")
    )
    assert generated.text == "Paris is the capital." and len(model_calls) == 1
    stats = await running.cache.GetCacheStats(cpb.GetCacheStatsRequest())
    assert (stats.hits, stats.writes, stats.backend) == (2, 1, "memory")


async def test_per_call_overrides_over_rpc(cached: Any, model_calls: list[Any]) -> None:
    running, _, clock = cached

    async def call(resource: str | None = None, **cache_opts: Any) -> None:
        options = opb.ExecutionOptions(response_cache=opb.ResponseCacheOptions(**cache_opts))
        if resource:
            options.memory.resource = resource
        await running.agents.Generate(apb.GenerateRequest(agent_id="search", text="q", options=options))

    await call("u1")
    await call("u2")
    assert len(model_calls) == 2  # two resource ids never share an entry
    await call("u1", bust=True)
    assert len(model_calls) == 3  # bust calls the model
    await call("u1")
    assert len(model_calls) == 3  # and rewrote the entry
    await call("u1", scope="team")
    await call("u2", scope="team")
    assert len(model_calls) == 4  # an explicit scope shares across resources
    await call("u3", no_scope=empty_pb2.Empty())
    await call(None, no_scope=empty_pb2.Empty())
    assert len(model_calls) == 5  # no scope shares across all
    await call("u9", key="fixed")
    await call("u8", key="fixed")
    assert len(model_calls) == 6  # a fixed key is used verbatim
    clock.now += 601
    await call("u1")
    assert len(model_calls) == 7  # the ttl expired


async def test_cache_service_entries(cached: Any) -> None:
    running, _, _ = cached
    stub = running.cache
    value = struct_pb2.Value()
    value.struct_value.update({"answer": 42, "tags": ["a", "b"]})
    await stub.SetCacheEntry(cpb.SetCacheEntryRequest(key="app:one", value=value))
    await stub.SetCacheEntry(cpb.SetCacheEntryRequest(key="app:two", value=value, ttl=duration_pb2.Duration(seconds=5)))
    await stub.SetCacheEntry(cpb.SetCacheEntryRequest(key="other:x", value=value, pinned=True))
    got = await stub.GetCacheEntry(cpb.GetCacheEntryRequest(key="app:one"))
    assert got.found and got.value.struct_value["answer"] == 42
    assert not (await stub.GetCacheEntry(cpb.GetCacheEntryRequest(key="missing"))).found
    assert (await stub.DeleteCacheEntry(cpb.DeleteCacheEntryRequest(key="app:one"))).deleted
    assert not (await stub.DeleteCacheEntry(cpb.DeleteCacheEntryRequest(key="app:one"))).deleted
    assert (await stub.ClearCache(cpb.ClearCacheRequest(prefix="app:"))).deleted_count == 1
    assert (await stub.GetCacheEntry(cpb.GetCacheEntryRequest(key="other:x"))).found
    assert (await stub.GetCacheStats(cpb.GetCacheStatsRequest())).size == 1


@pytest.mark.parametrize(
    ("kind", "empty"), [("struct_value", {}), ("list_value", []), ("string_value", ""), ("number_value", 0)]
)
async def test_empty_values_round_trip_through_the_cache(cached: Any, kind: str, empty: Any) -> None:
    running, _, _ = cached
    value = struct_pb2.Value()
    if kind == "struct_value":
        value.struct_value.SetInParent()
    elif kind == "list_value":
        value.list_value.SetInParent()
    else:
        setattr(value, kind, empty)
    await running.cache.SetCacheEntry(cpb.SetCacheEntryRequest(key="empty", value=value))
    got = await running.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key="empty"))
    assert got.found and got.value.WhichOneof("kind") == kind
    assert got.value == value


async def test_cached_response_entries_are_readable_and_invalidated_by_agent_and_scope(cached: Any) -> None:
    running, cache, _ = cached
    for resource in ("u1", "u2"):
        options = opb.ExecutionOptions()
        options.memory.resource = resource
        await running.agents.Generate(apb.GenerateRequest(agent_id="search", text="q", options=options))
    await running.agents.Generate(
        apb.GenerateRequest(
            agent_id="search",
            text="q",
            options=opb.ExecutionOptions(response_cache=opb.ResponseCacheOptions(no_scope=empty_pb2.Empty())),
        )
    )
    keys = await cache.keys("agentd:agent-response:search")
    assert len(keys) == 3
    entry = await running.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key=keys[0]))
    assert entry.found and "chunks" in str(entry.value)
    only_u1 = await running.cache.InvalidateResponseCache(
        cpb.InvalidateResponseCacheRequest(agent_id="search", scope="u1")
    )
    assert only_u1.deleted_count == 1
    unscoped = await running.cache.InvalidateResponseCache(
        cpb.InvalidateResponseCacheRequest(agent_id="search", no_scope=empty_pb2.Empty())
    )
    assert unscoped.deleted_count == 1
    rest = await running.cache.InvalidateResponseCache(cpb.InvalidateResponseCacheRequest(agent_id="search"))
    assert rest.deleted_count == 1
    assert await cache.keys("agentd:agent-response:") == []


@pytest.mark.parametrize(
    ("call", "fields"),
    [
        (lambda s: s.GetCacheEntry(cpb.GetCacheEntryRequest()), {"key"}),
        (lambda s: s.SetCacheEntry(cpb.SetCacheEntryRequest(key="k")), {"value"}),
        (
            lambda s: s.SetCacheEntry(
                cpb.SetCacheEntryRequest(
                    key="k", value=struct_pb2.Value(number_value=1), ttl=duration_pb2.Duration(seconds=-1)
                )
            ),
            {"ttl"},
        ),
        (
            lambda s: s.SetCacheEntry(
                cpb.SetCacheEntryRequest(
                    key="k", value=struct_pb2.Value(number_value=1), ttl=duration_pb2.Duration(seconds=1), pinned=True
                )
            ),
            {"pinned"},
        ),
        (
            lambda s: s.SetCacheEntry(
                cpb.SetCacheEntryRequest(
                    key="k", value=struct_pb2.Value(number_value=1), ttl=duration_pb2.Duration(seconds=5, nanos=-5)
                )
            ),
            {"ttl"},
        ),
        (lambda s: s.DeleteCacheEntry(cpb.DeleteCacheEntryRequest(key="x" * 2000)), {"key"}),
        (lambda s: s.ClearCache(cpb.ClearCacheRequest()), {"prefix"}),
        (lambda s: s.InvalidateResponseCache(cpb.InvalidateResponseCacheRequest()), {"agent_id"}),
        (lambda s: s.InvalidateResponseCache(cpb.InvalidateResponseCacheRequest(agent_id="a", scope="")), {"scope"}),
    ],
)
async def test_cache_service_rejects_bad_input_with_field_violations(cached: Any, call: Any, fields: set[str]) -> None:
    running, _, _ = cached
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call(running.cache)
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert set(err.violations) == fields


async def test_the_configured_cached_echo_agent_caches(server: Running, model_calls: list[Any]) -> None:
    request = apb.GenerateRequest(agent_id="cached-echo", text="same question")
    assert (await server.agents.Generate(request)).text == "same question"
    assert (await server.agents.Generate(request)).text == "same question"
    assert len(model_calls) == 1
