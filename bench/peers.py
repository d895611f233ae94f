"""agentd beside its peer: Mastra (`@mastra/core`, bench/peers/package-lock.json)
in-process on Node over ai's MockLanguageModelV3, and agentd over loopback gRPC
(`agentd serve`, the embedded echo model, memory storage) from a Python
grpc.aio client, with a bare grpc.aio server (bench/bare_server.py) as the
floor gRPC itself sets. The same workloads on every side:

- stream: 2000 text deltas, with 0 and with 3 pass-through output-stream
  processors, 3 warm-up then 10 timed streams (median chunks/s);
- generate: a 5-word reply, 50 warm-up then 500 sequential calls (p50, p99);
- concurrent: 1 warm-up then 5 timed batches of 50 concurrent generates
  (median batch time);
- cache: a ResponseCache over the in-memory cache, 1 miss then 500 identical
  hits (p50, p99), with 0 model calls on the hits checked;
- cold start: Mastra from process start to `@mastra/core/agent` imported and an
  Agent built (its first line of output); agentd from exec to health SERVING;
- peak RSS: the largest of Mastra's processes, of agentd's server processes.

Each measured run is a fresh process (a fresh server and a fresh client for
agentd); each figure is the median of --runs (3) runs, interleaved so drift
hits every side alike. Every workload checks its own output (the text, the
count, the model calls), so no side is fast by doing less. Prints the table
with the ratios and the goals (`make bench-peers`; exits 1 when a check fails,
never for a goal missed).

    python bench/peers.py [--runs 3] [--quick]
    python bench/peers.py --client WORKLOAD ADDR PARAMS   (one client run, a JSON line)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bare_server
import grpc
import load
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, cache_service_pb2_grpc
from agentd_proto.v1 import cache_service_pb2 as cachepb

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "bench" / "peers"
MASTRA = PEERS / "mastra.mjs"
REPLY = "one two three four five"
CACHE_PROMPT = "What is the capital of France?"

CONFIG = """
[server]
host = "127.0.0.1"

[storage]
backend = "memory"

[cache]
backend = "memory"

[[agents]]
id = "echo"
model = "local/echo"

[[agents]]
id = "pass3"
model = "local/echo"
output_processors = [
  { name = "pass-through", options = { id = "p0" } },
  { name = "pass-through", options = { id = "p1" } },
  { name = "pass-through", options = { id = "p2" } },
]

[[agents]]
id = "cached"
model = "local/echo"
input_processors = [ { name = "response-cache", options = { backend = "memory", agentId = "cached" } } ]
"""

#: What cold start measures on agentd's side: `agentd serve` with one echo agent, no --app.
COLD_CONFIG = load.CONFIG

FULL = {
    "stream0": {"deltas": 2000, "warmup": 3, "timed": 10},
    "stream3": {"deltas": 2000, "warmup": 3, "timed": 10},
    "generate": {"warmup": 50, "calls": 500},
    "concurrent": {"warmup": 1, "batches": 5, "concurrency": 50},
    "cache": {"calls": 500},
    "cold": {},
}
QUICK = {
    "stream0": {"deltas": 2000, "warmup": 1, "timed": 3},
    "stream3": {"deltas": 2000, "warmup": 1, "timed": 3},
    "generate": {"warmup": 10, "calls": 100},
    "concurrent": {"warmup": 1, "batches": 2, "concurrency": 50},
    "cache": {"calls": 100},
    "cold": {},
}


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


# ---------------------------------------------------------------- the client (its own process)


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


# ---------------------------------------------------------------- the driver


def peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for pid {pid}")


def last_json(out: str, who: str) -> dict[str, Any]:
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        raise CheckFailed(f"{who} printed no result:\n{out}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def run_mastra(workload: str, params: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        ["node", str(MASTRA), workload, json.dumps(params)],
        cwd=PEERS,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    ready_ms = (time.perf_counter() - start) * 1e3
    out, err = proc.communicate(timeout=600)
    if proc.returncode != 0:
        raise CheckFailed(f"mastra {workload} exited {proc.returncode}:\n{err[-3000:]}")
    result = last_json(first + out, f"mastra {workload}")
    if workload == "cold":
        result["cold_ms"] = ready_ms
    return result


def run_client(workload: str, addr: str, params: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--client", workload, addr, json.dumps(params)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise CheckFailed(f"client {workload} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return last_json(proc.stdout, f"client {workload}")


async def until_serving(server: load.Server) -> None:
    """Polls health from the moment of exec until the server answers SERVING."""
    deadline = time.monotonic() + 60
    async with grpc.aio.insecure_channel(server.addr) as channel:
        check_health = health_pb2_grpc.HealthStub(channel).Check
        while True:
            if server.proc.poll() is not None:
                raise CheckFailed(f"{server.name} exited ({server.proc.returncode}); see {server.log}")
            try:
                reply = await check_health(health_pb2.HealthCheckRequest(), timeout=1, wait_for_ready=True)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            if time.monotonic() > deadline:
                raise CheckFailed(f"{server.name} not SERVING after 60 s; see {server.log}")
            await asyncio.sleep(0.002)


def run_agentd(work: Path, workload: str, params: dict[str, Any]) -> dict[str, Any]:
    start = time.perf_counter()
    if workload == "cold":
        server = load.start_agentd(work, "cold", config_text=COLD_CONFIG)
    else:
        server = load.start_agentd(work, "agentd", app="agentd_app", config_text=CONFIG, cwd=PEERS)
    try:
        asyncio.run(until_serving(server))
        if workload == "cold":
            return {"cold_ms": (time.perf_counter() - start) * 1e3, "peak_rss_kb": peak_rss_kb(server.pid)}
        result = run_client(workload, server.addr, params)
        result["peak_rss_kb"] = peak_rss_kb(server.pid)
        return result
    finally:
        server.stop()


def run_bare(work: Path, workload: str, params: dict[str, Any]) -> dict[str, Any]:
    server = load.start_bare(work)
    try:
        asyncio.run(load.wait_ready(server))
        return run_client(workload, server.addr, {**params, "bare": True})
    finally:
        server.stop()


@dataclass
class Row:
    figure: str
    workload: str
    key: str
    unit: str
    #: The goal as text, and whether (mastra, agentd, bare) meets it.
    goal: str
    met: Callable[[float, float, float | None], bool]
    bare: bool = False
    #: Higher is better (a rate), so the ratio shown is agentd / Mastra either way.


ROWS = [
    Row(
        "stream, 2000 deltas, 0 processors",
        "stream0",
        "chunks_per_s",
        "chunks/s",
        "≥ 3x Mastra",
        lambda m, a, b: a >= 3 * m,
    ),
    Row(
        "stream, 2000 deltas, 3 pass-through stream processors",
        "stream3",
        "chunks_per_s",
        "chunks/s",
        "≥ 3x Mastra, ≥ 2.5x bare",
        lambda m, a, b: a >= 3 * m and b is not None and a >= 2.5 * b,
        bare=True,
    ),
    Row(
        "generate, 5-word reply, p50",
        "generate",
        "p50_ms",
        "ms",
        "≤ bare + 0.3 ms",
        lambda m, a, b: b is not None and a <= b + 0.3,
        bare=True,
    ),
    Row("generate, 5-word reply, p99", "generate", "p99_ms", "ms", "", lambda m, a, b: True, bare=True),
    Row("50 concurrent generates, per batch", "concurrent", "batch_ms", "ms", "", lambda m, a, b: True, bare=True),
    Row("response-cache hit, p50", "cache", "p50_ms", "ms", "≤ 0.35x Mastra", lambda m, a, b: a <= 0.35 * m),
    Row("response-cache hit, p99", "cache", "p99_ms", "ms", "", lambda m, a, b: True),
    Row("cold start to answering", "cold", "cold_ms", "ms", "≤ 0.5x Mastra", lambda m, a, b: a <= 0.5 * m),
    Row("peak RSS", "rss", "peak_rss_kb", "MB", "≤ 0.25x Mastra", lambda m, a, b: a <= 0.25 * m),
]


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "chunks/s":
        return f"{value:,.0f}"
    if unit == "MB":
        return f"{value / 1024:,.0f}"
    return f"{value:,.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="fewer calls per run (a smoke run)")
    parser.add_argument("--only", nargs="*", default=None, help="workloads to run (default: all)")
    parser.add_argument("--client", nargs=3, metavar=("WORKLOAD", "ADDR", "PARAMS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        workload, addr, params = args.client
        print(json.dumps(asyncio.run(client(workload, addr, json.loads(params)))))
        return 0
    if not (PEERS / "node_modules" / "@mastra" / "core").exists():
        print("bench/peers/node_modules is missing: run `npm ci` in bench/peers (make bench-peers does)")
        return 1
    plan = QUICK if args.quick else FULL
    workloads = [w for w in plan if args.only is None or w in args.only]
    # results[side][workload] = one dict per run
    results: dict[str, dict[str, list[dict[str, Any]]]] = {"mastra": {}, "agentd": {}, "bare": {}}
    bare_workloads = {row.workload for row in ROWS if row.bare}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="agentd-peers-") as tmp:
        work = Path(tmp)
        try:
            for run in range(args.runs):
                for workload in workloads:
                    params = plan[workload]
                    results["mastra"].setdefault(workload, []).append(run_mastra(workload, params))
                    agentd = run_agentd(work, workload, params)
                    results["agentd"].setdefault(workload, []).append(agentd)
                    if workload in bare_workloads:
                        bare_params = {**params, "reply_hex": agentd.get("reply_hex", "")}
                        results["bare"].setdefault(workload, []).append(run_bare(work, workload, bare_params))
                    print(f"  run {run + 1}/{args.runs}: {workload} done", file=sys.stderr, flush=True)
        except CheckFailed as failed:
            print(f"check failed: {failed}")
            return 1
    elapsed = time.monotonic() - started

    def median(side: str, workload: str, key: str) -> float | None:
        if workload == "rss":
            peaks = [max(r["peak_rss_kb"] for r in runs) for runs in zip(*results[side].values(), strict=True)]
            return statistics.median(peaks) if peaks else None
        runs = results[side].get(workload)
        return statistics.median(r[key] for r in runs) if runs else None

    mastra_version = json.loads((PEERS / "node_modules" / "@mastra" / "core" / "package.json").read_text())["version"]
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"\nagentd beside Mastra {mastra_version} in-process (Node {node}), median of {args.runs} fresh processes"
        f"{' (--quick)' if args.quick else ''}; {os.cpu_count()} cores, {platform.processor() or platform.machine()},"
        f" {time.strftime('%Y-%m-%d')}, {elapsed:.0f} s"
    )
    print("| figure | unit | Mastra | agentd | bare grpc.aio | agentd / Mastra | goal | met |")
    print("|---|---|---|---|---|---|---|---|")
    for row in ROWS:
        if row.workload != "rss" and row.workload not in workloads:
            continue
        m, a = median("mastra", row.workload, row.key), median("agentd", row.workload, row.key)
        b = median("bare", row.workload, row.key) if row.bare else None
        if m is None or a is None:
            continue
        met = ("yes" if row.met(m, a, b) else "**no**") if row.goal else ""
        print(
            f"| {row.figure} | {row.unit} | {fmt(m, row.unit)} | {fmt(a, row.unit)} | {fmt(b, row.unit)} |"
            f" {a / m:.2f}x | {row.goal} | {met} |"
        )
    if "stream3" in workloads and results["bare"].get("stream3"):
        a, b = median("agentd", "stream3", "chunks_per_s"), median("bare", "stream3", "chunks_per_s")
        assert a is not None and b is not None
        print(f"(stream, 3 processors: agentd / bare one-chunk-per-message = {a / b:.2f}x)")
    if "generate" in workloads:
        a, b = median("agentd", "generate", "p50_ms"), median("bare", "generate", "p50_ms")
        assert a is not None and b is not None
        print(f"(generate p50: agentd - bare unary = {a - b:+.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
