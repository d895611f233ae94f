"""The client of bench/peers.py, one workload per process:

    python bench/peers_client.py WORKLOAD ADDR PARAMS

runs it against agentd (or, with "bare" in PARAMS, bench/bare_server.py) over
grpc.aio and prints one JSON line. It imports grpc and the generated messages,
nothing of agentd's, so the client's figures (and its collector's work) are a
grpc.aio caller's and nothing more.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import bare_server
import grpc

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, cache_service_pb2_grpc
from agentd_proto.v1 import cache_service_pb2 as cachepb

REPLY = "one two three four five"
CACHE_PROMPT = "What is the capital of France?"


class CheckFailed(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise CheckFailed(what)


def words(n: int) -> str:
    """The same text mastra.mjs streams: n deltas "w0 ", "w1 ", ..."""
    return "".join(f"w{i} " for i in range(n))


def percentiles(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {"p50_ms": ordered[len(ordered) // 2], "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]}


async def client_stream(channel: grpc.aio.Channel, params: dict[str, Any], agent_id: str | None) -> dict[str, Any]:
    """agent_id None: the bare server's one-chunk-per-message stream."""
    n = params["deltas"]
    if agent_id is None:
        expected = bare_server.BARE_DELTA * n
        call = channel.unary_stream(
            bare_server.BARE_STREAM, request_serializer=lambda b: b, response_deserializer=apb.StreamResponse.FromString
        )

        def open_stream() -> Any:
            return call(str(n).encode())
    else:
        expected = words(n)
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        request = apb.StreamRequest(agent_id=agent_id, text=expected)

        def open_stream() -> Any:
            return stub.Stream(request)

    async def once() -> float:
        start = time.perf_counter()
        got, text = 0, []
        async for message in open_stream():
            for chunk in message.chunks:
                if chunk.WhichOneof("payload") == "text_delta":
                    got += 1
                    text.append(chunk.text_delta.text)
        seconds = time.perf_counter() - start
        check(got == n and "".join(text) == expected, f"stream: {got} deltas of {n}")
        return got / seconds

    for _ in range(params["warmup"]):
        await once()
    return {"chunks_per_s": statistics.median([await once() for _ in range(params["timed"])])}


def generate_call(channel: grpc.aio.Channel, params: dict[str, Any], bare: bool) -> Callable[[], Awaitable[None]]:
    """One checked generate: agentd's echo agent, or the bare server sent agentd's reply."""
    if bare:
        payload = bytes.fromhex(params["reply_hex"])
        call = channel.unary_unary(
            bare_server.BARE_GENERATE,
            request_serializer=lambda b: b,
            response_deserializer=apb.GenerateResponse.FromString,
        )

        async def bare_once() -> None:
            reply = await call(payload)
            check(reply.text == REPLY, f"bare generate: {reply.text!r}")

        return bare_once
    stub = agent_service_pb2_grpc.AgentServiceStub(channel)
    request = apb.GenerateRequest(agent_id="echo", text=REPLY)

    async def once() -> None:
        reply = await stub.Generate(request)
        check(reply.text == REPLY, f"generate: {reply.text!r}")

    return once


async def client_generate(channel: grpc.aio.Channel, params: dict[str, Any], bare: bool) -> dict[str, Any]:
    once = generate_call(channel, params, bare)
    for _ in range(params["warmup"]):
        await once()
    ms = []
    for _ in range(params["calls"]):
        start = time.perf_counter()
        await once()
        ms.append((time.perf_counter() - start) * 1e3)
    return percentiles(ms)


async def client_concurrent(channel: grpc.aio.Channel, params: dict[str, Any], bare: bool) -> dict[str, Any]:
    once = generate_call(channel, params, bare)

    async def batch() -> float:
        start = time.perf_counter()
        await asyncio.gather(*(once() for _ in range(params["concurrency"])))
        return (time.perf_counter() - start) * 1e3

    for _ in range(params["warmup"]):
        await batch()
    return {"batch_ms": statistics.median([await batch() for _ in range(params["batches"])])}


async def client_cache(channel: grpc.aio.Channel, params: dict[str, Any]) -> dict[str, Any]:
    stub = agent_service_pb2_grpc.AgentServiceStub(channel)
    stats = cache_service_pb2_grpc.CacheServiceStub(channel).GetCacheStats
    request = apb.GenerateRequest(agent_id="cached", text=CACHE_PROMPT)
    first = await stub.Generate(request)  # the miss that fills the cache
    check(first.text == CACHE_PROMPT, f"cache: {first.text!r}")
    before = await stats(cachepb.GetCacheStatsRequest())
    check(before.misses == 1 and before.writes == 1, f"cache: {before.misses} misses to fill it")
    ms = []
    for _ in range(params["calls"]):
        start = time.perf_counter()
        reply = await stub.Generate(request)
        ms.append((time.perf_counter() - start) * 1e3)
        check(reply.text == CACHE_PROMPT, f"cache hit: {reply.text!r}")
    after = await stats(cachepb.GetCacheStatsRequest())
    # A miss is a model call: none on the hits.
    check(after.misses == before.misses and after.hits - before.hits == params["calls"], f"cache: {after}")
    return percentiles(ms)


async def client(workload: str, addr: str, params: dict[str, Any]) -> dict[str, Any]:
    bare = params.get("bare", False)
    async with grpc.aio.insecure_channel(addr) as channel:
        if workload in ("stream0", "stream3"):
            return await client_stream(
                channel, params, None if bare else ("echo" if workload == "stream0" else "pass3")
            )
        if workload in ("generate", "concurrent"):
            run = client_generate if workload == "generate" else client_concurrent
            out = await run(channel, params, bare)
            if not bare:  # the bare server's reply: what agentd answers, serialised once
                reply = await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                    apb.GenerateRequest(agent_id="echo", text=REPLY)
                )
                out["reply_hex"] = reply.SerializeToString().hex()
            return out
        if workload == "cache":
            return await client_cache(channel, params)
    raise SystemExit(f"no client workload {workload}")


def main() -> None:
    workload, addr, params = sys.argv[1:4]
    try:
        print(json.dumps(asyncio.run(client(workload, addr, json.loads(params)))))
    except CheckFailed as failed:
        sys.exit(f"check failed: {failed}")


if __name__ == "__main__":
    main()
