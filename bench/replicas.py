"""Replicas on one Redis, side by side with one replica, in one run on this machine.

Four `agentd serve` processes and one redis-server (started here on free
ports): one replica alone (local leases, Redis storage, so the only difference
is coordination) and three replicas with redis coordination.

1. Signal-to-run delivery latency: SendSignal into a thread whose run is held
   open (answered `deliver`, after the signal is committed to the outbox),
   sent to the replica that runs the thread, to another replica (forwarded
   over Redis), and to the single replica. p50/p99, ratios against the single
   replica.
2. Fan-out: one run of `--deltas` chunks watched by 100 Subscribe streams,
   all on the single replica, or spread over the three (the run on one).
   Chunks delivered per second, summed over subscribers, from the wake answer
   to the last subscriber's finish; ratio against the single replica.

Prints the figures; asserts nothing (`make bench`).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import grpc
from cache import free_port, start_redis

from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import signal_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import thread_service_pb2 as tpb

AGENTS = """
[[agents]]
id = "held"
model = "held/scripted"
default_options = {{ max_steps = 1, provider_options = {{ local = {{ script = [
  {{ deltas = ["wait ", "more"] }},
] }}, held = {{ afterDeltas = 1, releaseFile = "{release}" }} }} }}

[[agents]]
id = "talker"
model = "local/scripted"
default_options = {{ provider_options = {{ local = {{ script = [ {{ deltas = [{deltas}] }} ] }} }} }}
"""

SINGLE = """
[storage]
backend = "redis"
redis_url = "{url}"
key_prefix = "single:store:"

[cache]
backend = "memory"
"""

REPLICA = """
[coordination]
backend = "redis"
redis_url = "{url}"
cluster_key_prefix = "replicas:cluster:"
key_prefix = "replicas:lease:"

[storage]
key_prefix = "replicas:store:"

[cache]
key_prefix = "replicas:cache:"
"""


def agentd_executable() -> str:
    return str(Path(sys.executable).with_name("agentd"))


def start(config: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            agentd_executable(),
            "serve",
            "--config",
            str(config),
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            "--log-level",
            "WARNING",
            "--app",  # the held/ test model (a reply held until a file exists): tests/support_models.py
            "tests.held_app",
        ],
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    return proc, f"127.0.0.1:{port}"


async def wait_serving(addr: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            async with grpc.aio.insecure_channel(addr) as channel:
                await asyncio.wait_for(channel.channel_ready(), 1)
                return
        except (TimeoutError, grpc.aio.AioRpcError):
            if time.monotonic() > deadline:
                raise


def target(thread_id: str) -> spb.SignalTarget:
    return spb.SignalTarget(resource_id="bench", thread_id=thread_id)


async def wake(channel: grpc.aio.Channel, agent: str, thread_id: str) -> str:
    reply = await signal_service_pb2_grpc.SignalServiceStub(channel).SendMessage(
        sspb.SendMessageRequest(agent_id=agent, target=target(thread_id), message=spb.MessageInput(text="go"))
    )
    assert reply.decision.WhichOneof("action") == "wake", reply
    return str(reply.decision.wake.run_id)


async def delivery_latency(channel: grpc.aio.Channel, thread_id: str, run_id: str, rounds: int) -> list[float]:
    stub = signal_service_pb2_grpc.SignalServiceStub(channel)
    out = []
    for i in range(rounds):
        request = sspb.SendSignalRequest(
            agent_id="held", target=target(thread_id), signal=spb.SignalInput(type="reactive", text=f"tick {i}")
        )
        started = time.perf_counter()
        reply = await stub.SendSignal(request)
        out.append((time.perf_counter() - started) * 1e6)
        assert reply.decision.deliver.run_id == run_id, reply
    return out


async def abort(channel: grpc.aio.Channel, thread_id: str) -> None:
    await thread_service_pb2_grpc.ThreadServiceStub(channel).AbortRun(
        tpb.AbortRunRequest(resource_id="bench", thread_id=thread_id)
    )


async def fan_out(channels: list[grpc.aio.Channel], run_on: grpc.aio.Channel, subscribers: int) -> tuple[float, int]:
    """Seconds from the wake answer to the last subscriber's finish, and chunks delivered."""
    thread_id = f"fan-{uuid.uuid4().hex[:8]}"
    ready = asyncio.Event()
    joined = 0
    counts: list[int] = []

    async def watch(channel: grpc.aio.Channel) -> None:
        nonlocal joined
        call = thread_service_pb2_grpc.ThreadServiceStub(channel).Subscribe(
            tpb.SubscribeRequest(resource_id="bench", thread_id=thread_id)
        )
        seen = 0
        async for response in call:
            if response.HasField("snapshot"):
                joined += 1
                if joined == subscribers:
                    ready.set()
                continue
            for chunk in response.chunks.chunks:
                seen += 1
                if chunk.WhichOneof("payload") == "finish":
                    counts.append(seen)
                    call.cancel()
                    return

    watchers = [asyncio.ensure_future(watch(channels[i % len(channels)])) for i in range(subscribers)]
    await ready.wait()
    started = time.perf_counter()
    await wake(run_on, "talker", thread_id)
    await asyncio.gather(*watchers)
    return time.perf_counter() - started, sum(counts)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def bench(single: str, replicas: list[str], rounds: int, subscribers: int, repeats: int) -> None:
    channels = {addr: grpc.aio.insecure_channel(addr) for addr in [single, *replicas]}
    for addr in channels:
        await wait_serving(addr)
    try:
        # 1. delivery latency: a held run on the single replica, and one on replica 0.
        alone = f"lat-{uuid.uuid4().hex[:8]}"
        shared = f"lat-{uuid.uuid4().hex[:8]}"
        run_alone = await wake(channels[single], "held", alone)
        run_shared = await wake(channels[replicas[0]], "held", shared)
        cases = {
            "one replica": (channels[single], alone, run_alone),
            "3 replicas, sent to the run's replica": (channels[replicas[0]], shared, run_shared),
            "3 replicas, sent to another replica": (channels[replicas[1]], shared, run_shared),
        }
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for channel, thread_id, run_id in cases.values():
            await delivery_latency(channel, thread_id, run_id, 20)  # warm up
        for _ in range(10):  # interleaved rounds, so drift hits every case alike
            for name, (channel, thread_id, run_id) in cases.items():
                samples[name] += await delivery_latency(channel, thread_id, run_id, rounds // 10)
        await abort(channels[single], alone)
        await abort(channels[replicas[0]], shared)
        base = statistics.median(samples["one replica"])
        print(f"signal-to-run delivery (SendSignal answered deliver), {rounds} signals per case, interleaved")
        print(f"  {'case':<40} {'p50 µs':>8} {'p99 µs':>8} {'p50 ratio':>10} {'p99 ratio':>10}")
        base99 = percentile(samples["one replica"], 0.99)
        for name, values in samples.items():
            p50, p99 = statistics.median(values), percentile(values, 0.99)
            print(f"  {name:<40} {p50:>8.0f} {p99:>8.0f} {p50 / base:>10.2f} {p99 / base99:>10.2f}")

        # 2. fan-out to `subscribers` Subscribe streams.
        rates: dict[str, list[float]] = {"one replica": [], "3 replicas": []}
        for _ in range(repeats):
            for name, spread, run_on in (
                ("one replica", [channels[single]], channels[single]),
                ("3 replicas", [channels[a] for a in replicas], channels[replicas[0]]),
            ):
                seconds, delivered = await fan_out(spread, run_on, subscribers)
                rates[name].append(delivered / seconds)
        print(f"fan-out: one run watched by {subscribers} subscribers, median of {repeats}")
        print(f"  {'case':<40} {'chunks/s':>10} {'ratio':>8}")
        base_rate = statistics.median(rates["one replica"])
        for name, values in rates.items():
            rate = statistics.median(values)
            print(f"  {name:<40} {rate:>10.0f} {rate / base_rate:>8.2f}")
    finally:
        for channel in channels.values():
            await channel.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--signals", type=int, default=500, help="signals per latency case")
    parser.add_argument("--subscribers", type=int, default=100)
    parser.add_argument("--deltas", type=int, default=500, help="text deltas in the fan-out run")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    redis_proc, redis_url = start_redis()
    if redis_url is None:
        raise SystemExit("redis-server is needed for this benchmark")
    work = Path(tempfile.mkdtemp(prefix="agentd-bench-replicas-"))
    deltas = ", ".join(f'"w{i} "' for i in range(args.deltas))
    agents = AGENTS.format(release=work / "never", deltas=deltas)
    (work / "single.toml").write_text(SINGLE.format(url=redis_url) + agents)
    (work / "replica.toml").write_text(REPLICA.format(url=redis_url) + agents)
    procs = []
    try:
        single_proc, single = start(work / "single.toml", work / "single.log")
        procs.append(single_proc)
        replicas = []
        for i in range(3):
            proc, addr = start(work / "replica.toml", work / f"replica-{i}.log")
            procs.append(proc)
            replicas.append(addr)
        asyncio.run(bench(single, replicas, args.signals, args.subscribers, args.repeats))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
        redis_proc.terminate() if redis_proc is not None else None
        print(f"(server logs in {work})")


if __name__ == "__main__":
    main()
