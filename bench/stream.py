"""Stream throughput: agentd's Stream (local echo model) against a bare grpc.aio
server stream sending the same number of one-chunk messages, side by side in
one run on this machine. agentd runs with no processors, with 3 pass-through
output-stream processors, and with 3 processors that have no stream hook.
Each server runs in its own process; the client runs here. Prints chunks/s
and the ratios (no assertions: `make bench`)."""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import statistics
import time
from pathlib import Path

import bare_server
import grpc

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent


def bench_agents() -> list[object]:
    from agentd.runtime import Agent
    from agentd.runtime.processors.base import Processor

    class PassThrough(Processor):
        def __init__(self, id: str) -> None:
            self.id = id

        def process_output_stream(self, args):  # type: ignore[no-untyped-def]
            return args.part

    class ResultOnly(Processor):
        def __init__(self, id: str) -> None:
            self.id = id

        def process_output_result(self, args):  # type: ignore[no-untyped-def]
            return None

    return [
        Agent(id="echo"),
        Agent(id="pass3", output_processors=[PassThrough(f"p{i}") for i in range(3)]),
        Agent(id="nostream3", output_processors=[ResultOnly(f"r{i}") for i in range(3)]),
    ]


def serve_agentd(port_queue: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    from agentd.grpc.server import AgentdServer
    from agentd.runtime import AgentRegistry
    from agentd.runtime.host import Host

    async def main() -> None:
        host = Host(agents=AgentRegistry(bench_agents()))  # type: ignore[arg-type]
        server = AgentdServer(host)
        port_queue.put(await server.start("127.0.0.1:0"))
        await asyncio.to_thread(stop.wait)
        await server.stop(grace=0)

    asyncio.run(main())


def serve_bare(port_queue: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    async def main() -> None:
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        server.add_generic_rpc_handlers(bare_server.handlers())
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        port_queue.put(port)
        await asyncio.to_thread(stop.wait)
        await server.stop(0)

    asyncio.run(main())


async def time_agentd(addr: str, chunks: int, agent_id: str = "echo") -> tuple[float, int]:
    words = " ".join("w" for _ in range(chunks - 6))  # + start, step-start, text-start/end, step-finish, finish
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        start = time.perf_counter()
        got = 0
        async for message in stub.Stream(apb.StreamRequest(agent_id=agent_id, text=words)):
            got += len(message.chunks)
        return time.perf_counter() - start, got


async def time_bare(addr: str, chunks: int) -> tuple[float, int]:
    async with grpc.aio.insecure_channel(addr) as channel:
        call = channel.unary_stream(
            bare_server.BARE_STREAM, request_serializer=lambda b: b, response_deserializer=apb.StreamResponse.FromString
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

    cases = {
        "agentd, 0 processors": lambda: time_agentd(addrs["agentd"], args.chunks, "echo"),
        "agentd, 3 pass-through stream processors": lambda: time_agentd(addrs["agentd"], args.chunks, "pass3"),
        "agentd, 3 processors without a stream hook": lambda: time_agentd(addrs["agentd"], args.chunks, "nostream3"),
        "bare grpc.aio, one chunk per message": lambda: time_bare(addrs["bare"], args.chunks),
    }

    async def run() -> dict[str, list[float]]:
        rates: dict[str, list[float]] = {name: [] for name in cases}
        for case in cases.values():  # warm-up
            await case()
        for _ in range(args.rounds):  # interleaved, so drift hits every case alike
            for name, case in cases.items():
                seconds, got = await case()
                assert got == args.chunks, (name, got)
                rates[name].append(got / seconds)
        return rates

    try:
        rates = asyncio.run(run())
    finally:
        stop.set()
        for proc in procs:
            proc.join(timeout=10)
    medians = {name: statistics.median(r) for name, r in rates.items()}
    bare = medians["bare grpc.aio, one chunk per message"]
    print(f"stream throughput, {args.chunks} chunks, median of {args.rounds} interleaved rounds")
    print(f"  {'case':<44} {'chunks/s':>10} {'vs bare':>8}")
    for name, rate in medians.items():
        print(f"  {name:<44} {rate:>10,.0f} {rate / bare:>8.2f}")


if __name__ == "__main__":
    main()
