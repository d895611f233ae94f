"""Remote processors: Stream chunks/s through one pass-through output-stream
processor in-process against the same processor remote, in Go over loopback
(bench/goprocessor, built with clients/go/processor); and Generate p50 with
no processor against a remote process_input processor (one round trip per
run, plus the stream's open and hello). agentd and the Go processor run in
their own processes, the client here. Prints the figures (no assertions:
`make bench`)."""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from agentd_proto.v1 import options_pb2 as opb

ROOT = Path(__file__).resolve().parent.parent
GO_PROCESSOR = ROOT / "bench" / "goprocessor"


def serve_agentd(port_queue: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    from agentd.grpc.server import AgentdServer
    from agentd.remote import remote_factory
    from agentd.runtime import Agent, AgentRegistry
    from agentd.runtime.host import Host
    from agentd.runtime.processors.base import Processor
    from agentd.runtime.processors.catalogue import default_registry

    class PassThrough(Processor):
        id = "pass-through"

        def process_output_stream(self, args):  # type: ignore[no-untyped-def]
            return args.part

    async def main() -> None:
        registry = default_registry().extended({"remote": remote_factory(), "pass-through": lambda o: PassThrough()})
        host = Host(agents=AgentRegistry([Agent(id="echo")]), processors=registry)
        server = AgentdServer(host)
        port_queue.put(await server.start("127.0.0.1:0"))
        await asyncio.to_thread(stop.wait)
        await server.stop(grace=0)

    asyncio.run(main())


def lane(name: str, **options: Any) -> opb.ProcessorList:
    spec = opb.ProcessorSpec(name=name)
    if options:
        spec.options.update(options)
    return opb.ProcessorList(processors=[opb.ProcessorRef(processor=spec)])


async def time_stream(stub: Any, chunks: int, options: opb.ExecutionOptions) -> tuple[float, int]:
    words = " ".join("w" for _ in range(chunks - 6))  # + start, step-start, text-start/end, step-finish, finish
    start = time.perf_counter()
    got = 0
    async for message in stub.Stream(apb.StreamRequest(agent_id="echo", text=words, options=options)):
        got += len(message.chunks)
    return time.perf_counter() - start, got


async def time_generate(stub: Any, options: opb.ExecutionOptions) -> float:
    start = time.perf_counter()
    await stub.Generate(apb.GenerateRequest(agent_id="echo", text="hi", options=options))
    return time.perf_counter() - start


def start_go_processor(folder: Path) -> tuple[subprocess.Popen[str], str]:
    go = shutil.which("go")
    if go is None:
        raise SystemExit("bench/remote.py needs the Go toolchain (>= 1.26) to build bench/goprocessor")
    binary = folder / "processor"
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=GO_PROCESSOR, check=True)
    proc = subprocess.Popen([str(binary)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("listening "):
        proc.kill()
        raise SystemExit(f"bench/goprocessor printed {line!r}")
    return proc, line.removeprefix("listening ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--generates", type=int, default=300)
    args = parser.parse_args()
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    queue = ctx.Queue()
    server = ctx.Process(target=serve_agentd, args=(queue, stop), daemon=True)
    server.start()
    addr = f"127.0.0.1:{queue.get(timeout=60)}"
    folder = Path(tempfile.mkdtemp(prefix="agentd-bench-remote-"))
    go_proc, target = start_go_processor(folder)
    remote = {"target": target, "id": "pass-through-go", "timeoutMs": 10000}
    streams = {
        "1 pass-through stream processor, in-process": opb.ExecutionOptions(output_processors=lane("pass-through")),
        "the same, remote in Go over loopback": opb.ExecutionOptions(output_processors=lane("remote", **remote)),
    }
    generates = {
        "Generate, no processor": opb.ExecutionOptions(),
        "Generate, a remote process_input processor (Go)": opb.ExecutionOptions(
            input_processors=lane("remote", **remote)
        ),
    }

    async def run() -> tuple[dict[str, list[float]], dict[str, list[float]]]:
        async with grpc.aio.insecure_channel(addr) as channel:
            stub = agent_service_pb2_grpc.AgentServiceStub(channel)
            rates: dict[str, list[float]] = {name: [] for name in streams}
            for options in streams.values():  # warm-up
                await time_stream(stub, args.chunks, options)
            for _ in range(args.rounds):  # interleaved, so drift hits every case alike
                for name, options in streams.items():
                    seconds, got = await time_stream(stub, args.chunks, options)
                    assert got == args.chunks, (name, got)
                    rates[name].append(got / seconds)
            latencies: dict[str, list[float]] = {name: [] for name in generates}
            for options in generates.values():
                await time_generate(stub, options)
            for _ in range(args.generates):
                for name, options in generates.items():
                    latencies[name].append(await time_generate(stub, options))
            return rates, latencies

    try:
        rates, latencies = asyncio.run(run())
    finally:
        stop.set()
        server.join(timeout=10)
        go_proc.terminate()
        go_proc.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)
    medians = {name: statistics.median(r) for name, r in rates.items()}
    local = medians["1 pass-through stream processor, in-process"]
    print(f"remote processors: stream of {args.chunks} chunks, median of {args.rounds} interleaved rounds")
    print(f"  {'case':<48} {'chunks/s':>10} {'µs/chunk':>9} {'vs in-process':>14}")
    for name, rate in medians.items():
        print(f"  {name:<48} {rate:>10,.0f} {1e6 / rate:>9.1f} {local / rate:>14.2f}")
    print(f"remote processors: Generate p50 of {args.generates} calls each, interleaved")
    for name, samples in latencies.items():
        print(f"  {name:<48} p50 {statistics.median(samples) * 1000:>7.2f} ms")


if __name__ == "__main__":
    main()
