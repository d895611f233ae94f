"""Stream throughput: agentd's Stream (local echo model) against a bare grpc.aio
server stream sending the same number of one-chunk messages, side by side in
one run on this machine. Each server runs in its own process; the client runs
here. Prints chunks/s for both and the ratio (no assertions: `make bench`)."""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import statistics
import time
from pathlib import Path

import grpc

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from agentd_proto.v1 import chunk_pb2 as cpb

ROOT = Path(__file__).resolve().parent.parent

BARE_METHOD = "/bench.Bare/Stream"


def serve_agentd(port_queue: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    from agentd import config
    from agentd.grpc.server import AgentdServer
    from agentd.runtime import AgentRegistry
    from agentd.runtime.host import Host

    async def main() -> None:
        host = Host(agents=AgentRegistry(config.load(ROOT / "agentd.toml", env={}).agents))
        server = AgentdServer(host)
        port_queue.put(await server.start("127.0.0.1:0"))
        await asyncio.to_thread(stop.wait)
        await server.stop(grace=0)

    asyncio.run(main())


def serve_bare(port_queue: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    async def main() -> None:
        async def stream(request: bytes, context: grpc.aio.ServicerContext):  # type: ignore[no-untyped-def]
            count = int(request.decode())
            for seq in range(1, count + 1):
                chunk = cpb.Chunk(run_id="bare", seq=seq, text_delta=cpb.TextDeltaChunk(id="t", text="w "))
                yield apb.StreamResponse(chunks=[chunk]).SerializeToString()

        handler = grpc.unary_stream_rpc_method_handler(stream)
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Bare", {"Stream": handler}),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        port_queue.put(port)
        await asyncio.to_thread(stop.wait)
        await server.stop(0)

    asyncio.run(main())


async def time_agentd(addr: str, chunks: int) -> tuple[float, int]:
    words = " ".join("w" for _ in range(chunks - 6))  # + start, step-start, text-start/end, step-finish, finish
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        start = time.perf_counter()
        got = 0
        async for message in stub.Stream(apb.StreamRequest(agent_id="echo", text=words)):
            got += len(message.chunks)
        return time.perf_counter() - start, got


async def time_bare(addr: str, chunks: int) -> tuple[float, int]:
    async with grpc.aio.insecure_channel(addr) as channel:
        call = channel.unary_stream(
            BARE_METHOD, request_serializer=lambda b: b, response_deserializer=apb.StreamResponse.FromString
        )
        start = time.perf_counter()
        got = 0
        async for message in call(str(chunks).encode()):
            got += len(message.chunks)
        return time.perf_counter() - start, got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    procs, addrs = [], {}
    for name, target in (("agentd", serve_agentd), ("bare", serve_bare)):
        queue = ctx.Queue()
        proc = ctx.Process(target=target, args=(queue, stop), daemon=True)
        proc.start()
        procs.append(proc)
        addrs[name] = f"127.0.0.1:{queue.get(timeout=60)}"

    async def run() -> dict[str, list[float]]:
        rates: dict[str, list[float]] = {"agentd": [], "bare": []}
        await time_agentd(addrs["agentd"], args.chunks)  # warm-up
        await time_bare(addrs["bare"], args.chunks)
        for _ in range(args.rounds):  # interleaved, so drift hits both alike
            for name, fn in (("agentd", time_agentd), ("bare", time_bare)):
                seconds, got = await fn(addrs[name], args.chunks)
                assert got == args.chunks, (name, got)
                rates[name].append(got / seconds)
        return rates

    try:
        rates = asyncio.run(run())
    finally:
        stop.set()
        for proc in procs:
            proc.join(timeout=10)
    agentd, bare = statistics.median(rates["agentd"]), statistics.median(rates["bare"])
    print(f"stream throughput, {args.chunks} chunks, median of {args.rounds} rounds")
    print(f"  agentd Stream (local/echo):        {agentd:>10,.0f} chunks/s")
    print(f"  bare grpc.aio, one chunk/message:  {bare:>10,.0f} chunks/s")
    print(f"  ratio agentd / bare:               {agentd / bare:>10.2f}")


if __name__ == "__main__":
    main()
