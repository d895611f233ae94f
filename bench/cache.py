"""Cache-hit Generate latency: agentd answering from its response cache (in-memory
and Redis backends) against a bare unary grpc.aio call returning a prebuilt
response of the same shape, side by side in one run on this machine. Each
server runs in its own process; redis-server is started here on a free port.
Prints p50/p99 and the ratios (no assertions: `make bench`)."""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

import bare_server
import grpc

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc

PROMPT = "What is the capital of France?"
SCRIPT = {
    "local": {"script": [{"text": "Paris is the capital of France.", "usage": {"inputTokens": 9, "outputTokens": 6}}]}
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_agentd(redis_url: str | None, port_queue: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    from agentd.config import CacheSettings, build_caches
    from agentd.grpc.server import AgentdServer
    from agentd.runtime import Agent, AgentRegistry, ExecutionOptions
    from agentd.runtime.host import Host
    from agentd.runtime.processors.builtins.response_cache import ResponseCache

    async def main() -> None:
        caches = build_caches(CacheSettings(redis_url=redis_url, key_prefix="bench:"))
        agents = [
            Agent(
                id=f"cached-{name}",
                model="local/scripted",
                input_processors=[ResponseCache(cache)],
                default_options=ExecutionOptions(provider_options=SCRIPT),
            )
            for name, cache in caches.items()
        ]
        server = AgentdServer(Host(agents=AgentRegistry(agents), caches=caches))
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


def start_redis() -> tuple[subprocess.Popen[bytes] | None, str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis-server not found (Debian package redis-server): the Redis case is skipped")
        return None, None
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            tempfile.mkdtemp(),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


async def measure(addr: str, method: str, request: bytes, rounds: int) -> list[float]:
    async with grpc.aio.insecure_channel(addr) as channel:
        call = channel.unary_unary(method)
        await call(request)  # warm the connection (and the cache)
        out = []
        for _ in range(rounds):
            start = time.perf_counter()
            await call(request)
            out.append((time.perf_counter() - start) * 1e6)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    redis_proc, redis_url = start_redis()
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    queues = [ctx.Queue(), ctx.Queue()]
    procs = [ctx.Process(target=serve_agentd, args=(redis_url, queues[0], stop), daemon=True)]
    procs[0].start()
    agentd_addr = f"127.0.0.1:{queues[0].get(timeout=60)}"

    async def reference() -> bytes:
        async with grpc.aio.insecure_channel(agentd_addr) as channel:
            reply = await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                apb.GenerateRequest(agent_id="cached-memory", text=PROMPT)
            )
            return reply.SerializeToString()

    payload = asyncio.run(reference())
    procs.append(ctx.Process(target=serve_bare, args=(queues[1], stop), daemon=True))
    procs[1].start()
    bare_addr = f"127.0.0.1:{queues[1].get(timeout=60)}"
    generate = "/agentd.v1.AgentService/Generate"
    # The bare server echoes its request: sent what a cache hit returns, serialised once.
    cases = {"bare grpc.aio unary": (bare_addr, bare_server.BARE_GENERATE, payload)}
    for backend in ("memory", "redis") if redis_url else ("memory",):
        request = apb.GenerateRequest(agent_id=f"cached-{backend}", text=PROMPT).SerializeToString()
        cases[f"agentd Generate, cache hit ({backend})"] = (agentd_addr, generate, request)

    async def run() -> dict[str, list[float]]:
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(10):  # interleaved rounds, so drift hits every case alike
            for name, (addr, method, request) in cases.items():
                samples[name] += await measure(addr, method, request, args.calls // 10)
        return samples

    try:
        samples = asyncio.run(run())
    finally:
        stop.set()
        for proc in procs:
            proc.join(timeout=10)
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(timeout=10)
    bare = statistics.median(samples["bare grpc.aio unary"])
    print(f"cache-hit Generate latency, {args.calls} calls per case, interleaved")
    print(f"  {'case':<40} {'p50 µs':>8} {'p99 µs':>8} {'p50 vs bare':>12}")
    for name, values in samples.items():
        values.sort()
        p50, p99 = statistics.median(values), values[int(len(values) * 0.99) - 1]
        print(f"  {name:<40} {p50:>8.0f} {p99:>8.0f} {p50 / bare:>12.2f}")


if __name__ == "__main__":
    main()
