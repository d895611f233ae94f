"""Load: a real `agentd serve` process (the embedded echo model, memory
storage, a temporary agentd.toml) on loopback, driven from outside.

1. Generate at 50, 200 and 500 concurrent calls, by ghz (--generate-seconds
   each): calls/s, p50, p99, errors, and the server's CPU per call (its
   utime + stime from /proc/<pid>/stat over the phase / calls: the figure
   that moves least when other work shares the machine), and its event-loop
   thread's share (the main thread's; the rest is grpc's poller and
   event-engine threads). Then the same
   levels against a bare grpc.aio server (bench/bare_server.py) answering
   the echo agent's reply, serialised once: the floor under ghz's command,
   and agentd's calls/s and CPU per call as ratios to it (--no-floor skips
   it; --floor-spin-us 30 60 runs it again with the handler busy-waiting 30,
   then 60 µs: what a handler's time on the loop costs under this load).
2. 500 concurrent Streams for 60 s (--stream-seconds), by ghz: errors (keep 0).
3. 2,000 idle Subscribes (a thread each, opened at once on one channel, from
   grpc.aio here), then 100 concurrent Generates by ghz while they stay open:
   errors on both, and the server's RSS per idle subscription ((VmRSS with
   them open - VmRSS before) / subscriptions, from /proc/<pid>/status), on a
   fresh server (so they cannot hide in memory the first phases freed),
   beside a bare grpc.aio server holding as many streams: grpc's own share.

--profile then opens the subscriptions again under tracemalloc (agentd with
`--app bench.memprofile`, and the bare server) and splits each one's RSS into
agentd's Python objects, grpc's, and what tracemalloc cannot see (grpc core's
C memory, the allocators' slack).

ghz comes from .tools/bin (`make tools`) or PATH, fed the FileDescriptorSet
`buf build --as-file-descriptor-set` writes; without it, grpc.aio callers
here drive Generate and Stream instead (and the table says so). Calls in
flight when a duration ends finish and count. --quick shortens every
duration for a smoke run. --loop asyncio|uvloop is passed to `agentd serve
--loop` (default auto: agentd's own default, and no flag, so an older agentd
runs it too); the bare server runs on the same loop. ghz's own CPU per call is printed too (it
shares the cores); --no-ghz-templates spares it rendering the call data as
a template for every call. Prints tables, asserts nothing, exits 1 when any
call failed (`make bench-load`, part of `make bench`).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import inspect
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

import bare_server
import grpc
from google.protobuf import json_format
from servers import (
    BARE_SERVER,
    BIN,
    LOOPS,
    ROOT,
    Server,
    cpu_seconds,
    serve_loop_args,
    start_agentd,
    start_bare,
    wait_ready,
)

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import thread_service_pb2 as tpb

GENERATE = "agentd.v1.AgentService/Generate"
STREAM = "agentd.v1.AgentService/Stream"
GENERATE_REQUEST = apb.GenerateRequest(agent_id="echo", text="hello load")
STREAM_REQUEST = apb.StreamRequest(agent_id="echo", text="one two three four five six seven eight")


#: The bare server's handler: what it allocates is the handler's, not grpc's.
_lines, _first = inspect.getsourcelines(bare_server.subscribe)
BARE_HANDLER = range(_first, _first + len(_lines))


# ---------------------------------------------------------------- load


@dataclass
class Result:
    case: str
    tool: str
    calls: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    #: The server's CPU seconds over the phase (None: not measured).
    server_cpu: float | None = None
    #: ghz's CPU seconds, its report included (None: grpc.aio callers in this process).
    client_cpu: float | None = None
    #: The server's main thread's CPU seconds, the event loop's (the rest is grpc's threads).
    loop_cpu: float | None = None

    @property
    def rps(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(len(ordered) * q))] if ordered else float("nan")

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def per_call_us(self, seconds: float | None) -> float:
        calls = self.calls + self.error_count
        return seconds * 1e6 / calls if seconds is not None and calls else float("nan")


def ghz_path() -> str | None:
    local = ROOT / ".tools" / "bin" / "ghz"
    return str(local) if local.exists() else shutil.which("ghz")


def build_protoset(work: Path) -> Path:
    out = work / "agentd.binpb"
    subprocess.run([str(BIN / "buf"), "build", "--as-file-descriptor-set", "-o", str(out)], cwd=ROOT, check=True)
    return out


async def ghz(
    binary: str,
    protoset: Path,
    addr: str,
    case: str,
    call: str,
    data: dict[str, object],
    concurrency: int,
    seconds: float,
    templates: bool = True,
) -> Result:
    # ghz renders the call data as a template for every call unless told not
    # to (the data here has none): a quarter of ghz's CPU per call.
    lean = () if templates else ("--disable-template-data", "--disable-template-functions")
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = await asyncio.create_subprocess_exec(
        binary,
        *lean,
        "--insecure",
        "--protoset",
        str(protoset),
        "--call",
        call,
        "-d",
        json.dumps(data),
        "-c",
        str(concurrency),
        "-z",
        f"{seconds}s",
        "--duration-stop",  # calls in flight when the time is up finish and count
        "wait",
        "--timeout",
        "120s",
        "-O",
        "json",
        addr,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await proc.communicate()
    if proc.returncode != 0 and not out:
        raise RuntimeError(f"ghz failed ({proc.returncode}): {err.decode()[-2000:]}")
    report = json.loads(out)
    result = Result(case, "ghz")
    # ghz is the only child waited for meanwhile: the servers run on.
    done = resource.getrusage(resource.RUSAGE_CHILDREN)
    result.client_cpu = done.ru_utime + done.ru_stime - children.ru_utime - children.ru_stime
    for detail in report.get("details") or []:
        if detail["status"] == "OK":
            result.calls += 1
            result.latencies_ms.append(detail["latency"] / 1e6)
        else:
            result.errors[f"{detail['status']}: {detail.get('error', '')}"] += 1
    result.seconds = report["total"] / 1e9
    return result


async def python_load(addr: str, case: str, call: str, concurrency: int, seconds: float) -> Result:
    """What ghz does, from grpc.aio here (when ghz is missing): `concurrency`
    callers in a loop for `seconds`."""
    result = Result(case, "grpc.aio")
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        deadline = time.monotonic() + seconds

        async def caller() -> None:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                try:
                    if call == GENERATE:
                        await stub.Generate(GENERATE_REQUEST, timeout=120)
                    else:
                        async for _ in stub.Stream(STREAM_REQUEST, timeout=120):
                            pass
                except grpc.aio.AioRpcError as exc:
                    result.errors[f"{exc.code().name}: {exc.details()}"] += 1
                    continue
                result.calls += 1
                result.latencies_ms.append((time.perf_counter() - started) * 1e3)

        started = time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(concurrency)))
        result.seconds = time.perf_counter() - started
    return result


async def drive(tools: Tools, server: Server, case: str, call: str, concurrency: int, seconds: float) -> Result:
    """`concurrency` callers of `call` for `seconds`, and the server's CPU meanwhile."""
    started, loop_started = cpu_seconds(server.pid), cpu_seconds(server.pid, server.pid)
    if tools.ghz is None:
        result = await python_load(server.addr, case, call, concurrency, seconds)
    else:
        data = json_format.MessageToDict(GENERATE_REQUEST if call == GENERATE else STREAM_REQUEST)
        result = await ghz(
            tools.ghz, tools.protoset, server.addr, case, call, data, concurrency, seconds, tools.templates
        )
    # The loop thread's span sits inside the whole process's: read last at the start, first at the end.
    result.loop_cpu = cpu_seconds(server.pid, server.pid) - loop_started
    result.server_cpu = cpu_seconds(server.pid) - started
    return result


@dataclass
class Tools:
    ghz: str | None
    protoset: Path
    #: How long the server is left to settle before its RSS is read.
    settle: float = 1.0
    #: ghz renders its call data as a template for each call (its default).
    templates: bool = True


# ---------------------------------------------------------------- idle subscriptions


@dataclass
class Idle:
    """Subscriptions held open, each to a thread of its own."""

    calls: list[grpc.aio.UnaryStreamCall] = field(default_factory=list)  # type: ignore[type-arg]
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    opened: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    #: Anything but the snapshot arriving on an idle thread.
    unexpected: int = 0
    #: Set when this side cancels them: their CANCELLED is no error.
    closing: bool = False


async def open_idle(channel: grpc.aio.Channel, count: int, prefix: str) -> Idle:
    """Opens `count` Subscribes at once; returns when each answered its snapshot or failed."""
    idle = Idle()
    stub = thread_service_pb2_grpc.ThreadServiceStub(channel)
    answered = asyncio.Semaphore(0)

    async def hold(i: int) -> None:
        call = stub.Subscribe(tpb.SubscribeRequest(resource_id="load", thread_id=f"{prefix}-{i}"))
        idle.calls.append(call)
        snapshot = False
        try:
            async for response in call:
                if response.HasField("snapshot") and not snapshot:
                    snapshot = True
                    idle.opened += 1
                    answered.release()
                else:
                    idle.unexpected += 1
            if not idle.closing:
                idle.errors["ended while idle"] += 1
        except grpc.aio.AioRpcError as exc:
            if not idle.closing:
                idle.errors[f"{exc.code().name}: {exc.details()}"] += 1
        except asyncio.CancelledError:
            pass
        finally:
            if not snapshot:
                answered.release()

    idle.tasks = [asyncio.ensure_future(hold(i)) for i in range(count)]
    for _ in range(count):
        await answered.acquire()
    return idle


async def close_idle(idle: Idle) -> None:
    idle.closing = True
    for call in idle.calls:
        call.cancel()
    await asyncio.gather(*idle.tasks, return_exceptions=True)


@dataclass
class Memory:
    server: str
    subscriptions: int
    opened: int
    errors: collections.Counter[str]
    before_kb: int
    open_kb: int
    after_load_kb: int | None = None
    closed_kb: int | None = None

    @property
    def per_subscription_kb(self) -> float:
        return (self.open_kb - self.before_kb) / max(self.opened, 1)


async def warm_up(server: Server, channel: grpc.aio.Channel, tools: Tools) -> None:
    """Touch every path once (imports, caches, first allocations) before the baseline."""
    idle = await open_idle(channel, 50, "warm")
    await close_idle(idle)
    if server.agentd:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        for _ in range(20):
            await stub.Generate(GENERATE_REQUEST)
    await asyncio.sleep(tools.settle)


async def idle_phase(
    server: Server, tools: Tools, subscriptions: int, generates: int, seconds: float
) -> tuple[Memory, Result | None]:
    await wait_ready(server)
    async with grpc.aio.insecure_channel(server.addr) as channel:
        await warm_up(server, channel, tools)
        before = server.rss_kb()
        idle = await open_idle(channel, subscriptions, "idle")
        await asyncio.sleep(tools.settle)
        memory = Memory(server.name, subscriptions, idle.opened, idle.errors, before, server.rss_kb())
        load = None
        if server.agentd and generates:
            load = await drive(tools, server, f"{generates} Generates beside them", GENERATE, generates, seconds)
            memory.after_load_kb = server.rss_kb()
        await close_idle(idle)
        if idle.unexpected:
            memory.errors["unexpected message on an idle thread"] += idle.unexpected
        await asyncio.sleep(tools.settle)
        memory.closed_kb = server.rss_kb()
    return memory, load


# ---------------------------------------------------------------- profile


def owner(trace: tracemalloc.Traceback) -> tuple[str, str]:
    """Whose allocation, and where: the innermost agentd frame (or the bare
    server's handler) makes it agentd's; else grpc's. An allocation under no
    agentd frame but the entry point (agentd/cli.py, which the whole event loop
    runs under) was made from grpc's Cython code, which has no Python frames:
    its calls' tasks and state."""
    frames = list(reversed(trace))  # tracemalloc lists the oldest frame first
    for frame in frames:
        if "/agentd/" in frame.filename and not frame.filename.endswith("agentd/cli.py"):
            return "agentd", f"{short(frame.filename)}:{frame.lineno}"
        if frame.filename == str(BARE_SERVER) and frame.lineno in BARE_HANDLER:
            return "bare handler", f"{short(frame.filename)}:{frame.lineno}"
    for frame in frames:
        if "/grpc/" in frame.filename:
            return "grpc", f"{short(frame.filename)}:{frame.lineno}"
    top = frames[0]
    return "grpc", f"{short(top.filename)}:{top.lineno}"


def short(filename: str) -> str:
    for marker in ("/server/agentd/", "/site-packages/", "/lib/python3.11/", "/bench/"):
        if marker in filename:
            return filename.split(marker, 1)[1]
    return filename


async def profile_phase(work: Path, tools: Tools, subscriptions: int, bare: bool) -> dict[str, float]:
    """The Python heap the subscriptions add, bytes per subscription by owner
    (and prints its largest sources)."""
    out = work / ("tracemalloc-bare" if bare else "tracemalloc")
    out.mkdir()
    env = {"AGENTD_BENCH_TRACEMALLOC_DIR": str(out)}
    if bare:
        server = start_bare(work, "bare-profiled", env=env)
    else:
        server = start_agentd(work, "profiled", app="bench.memprofile", env=env)
    try:
        await wait_ready(server)

        async def snapshot(n: int) -> tracemalloc.Snapshot:
            server.proc.send_signal(signal.SIGUSR1)
            path = out / f"{n}.snapshot"
            for _ in range(600):  # the dump is renamed into place once whole
                if path.exists():
                    return tracemalloc.Snapshot.load(str(path))
                await asyncio.sleep(0.1)
            raise RuntimeError(f"no tracemalloc snapshot from {server.name}; see {server.log}")

        async with grpc.aio.insecure_channel(server.addr) as channel:
            await warm_up(server, channel, tools)
            before = await snapshot(0)
            idle = await open_idle(channel, subscriptions, "idle")
            await asyncio.sleep(tools.settle)
            after = await snapshot(1)
            await close_idle(idle)
    finally:
        server.stop()
    by_owner: collections.Counter[str] = collections.Counter()
    by_line: collections.Counter[tuple[str, str]] = collections.Counter()
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for diff in after.compare_to(before, "traceback"):
        if diff.size_diff <= 0:
            continue
        who, where = owner(diff.traceback)
        by_owner[who] += diff.size_diff
        by_line[(who, where)] += diff.size_diff
        counts[(who, where)] += diff.count_diff
    print(f"\n{server.name}: the largest sources of Python heap per idle subscription (tracemalloc)")
    print(f"  {'owner':<22} {'where (innermost frame of the owner)':<44} {'bytes':>7} {'objects':>7}")
    for (who, where), size in by_line.most_common(12):
        if size < subscriptions:  # under a byte each
            break
        print(f"  {who:<22} {where:<44} {size / subscriptions:>7.0f} {counts[(who, where)] / subscriptions:>7.1f}")
    return {who: size / subscriptions for who, size in by_owner.items()}


# ---------------------------------------------------------------- report


def print_table(results: list[Result]) -> None:
    print(
        f"  {'case':<36} {'tool':<8} {'calls':>8} {'calls/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}"
        f" {'server CPU us/call':>19} {'its loop thread':>16} {'ghz CPU us/call':>16}"
    )
    for r in results:
        print(
            f"  {r.case:<36} {r.tool:<8} {r.calls:>8} {r.rps:>8.0f} {r.percentile(0.5):>8.1f}"
            f" {r.percentile(0.99):>8.1f} {r.error_count:>7} {r.per_call_us(r.server_cpu):>19.0f}"
            f" {r.per_call_us(r.loop_cpu):>16.0f} {r.per_call_us(r.client_cpu):>16.0f}"
        )
    for r in results:
        for what, n in r.errors.most_common(5):
            print(f"    {r.case}: {n} x {what}")


def print_memory(memories: list[Memory]) -> None:
    print(
        f"  {'server':<8} {'opened':>7} {'errors':>7} {'RSS before':>11} {'RSS open':>10} {'KB/sub':>7}"
        f" {'RSS +load':>10} {'RSS closed':>11}"
    )
    for m in memories:
        after = f"{m.after_load_kb:>8} kB" if m.after_load_kb is not None else f"{'':>10}"
        print(
            f"  {m.server:<8} {m.opened:>7} {sum(m.errors.values()):>7} {m.before_kb:>8} kB {m.open_kb:>7} kB"
            f" {m.per_subscription_kb:>7.1f} {after} {m.closed_kb:>8} kB"
        )
        for what, n in m.errors.most_common(5):
            print(f"    {m.server}: {n} x {what}")


def print_split(memories: list[Memory], heaps: list[dict[str, float]]) -> None:
    """RSS per idle subscription split: Python objects by owner (tracemalloc),
    and the rest, which tracemalloc cannot see: grpc core's C memory (its
    HTTP/2 streams and call arenas) and the allocators' slack."""
    owners = sorted({who for heap in heaps for who in heap}, key=lambda w: (w != "agentd", w))
    print("\nwhere an idle subscription's RSS goes, KB each")
    print(f"  {'':<44}" + "".join(f"{m.server:>12}" for m in memories))
    for who in owners:
        print(f"  {who + ' (Python objects)':<44}" + "".join(f"{heap.get(who, 0) / 1024:>12.1f}" for heap in heaps))
    rest = [m.per_subscription_kb - sum(heap.values()) / 1024 for m, heap in zip(memories, heaps, strict=True)]
    print(f"  {'untraced: grpc core, allocator slack':<44}" + "".join(f"{r:>12.1f}" for r in rest))
    print(f"  {'RSS per subscription':<44}" + "".join(f"{m.per_subscription_kb:>12.1f}" for m in memories))


async def floor_phase(work: Path, tools: Tools, args: argparse.Namespace, spin_us: int = 0) -> list[Result]:
    """The Generate levels again, against bench/bare_server.py's AgentService.Generate
    (a fixed reply of the echo agent's shape) on the same loop: what grpc.aio
    and the shared cores allow before agentd does anything (or, `spin_us`,
    once a handler busy-waits that long on the loop)."""
    env = {"AGENTD_BENCH_BARE_SPIN_US": str(spin_us)} if spin_us else None
    bare = start_bare(work, "bare-generate", env=env, loop=args.loop)
    name = f"bare+{spin_us}us Generate" if spin_us else "bare Generate"
    try:
        await wait_ready(bare)
        await drive(tools, bare, "warm-up", GENERATE, 10, min(args.generate_seconds, 2))
        floors = []
        for level in args.levels:
            print(f"{name} at {level} concurrent calls for {args.generate_seconds:g} s ...", flush=True)
            floors.append(
                await drive(tools, bare, f"{name}, {level} concurrent", GENERATE, level, args.generate_seconds)
            )
        return floors
    finally:
        bare.stop()


# ---------------------------------------------------------------- main


async def run(args: argparse.Namespace, work: Path) -> int:
    ghz_binary = None if args.no_ghz else ghz_path()
    if ghz_binary is None:
        print("ghz not found (make tools): Generate and Stream are driven by grpc.aio from here")
    tools = Tools(ghz_binary, build_protoset(work), 0.2 if args.quick else 1.0, not args.no_ghz_templates)
    results: list[Result] = []
    serve_args = serve_loop_args(args.loop)
    server = start_agentd(work, "agentd", serve_args=serve_args)
    try:
        await wait_ready(server)
        await drive(tools, server, "warm-up", GENERATE, 10, min(args.generate_seconds, 2))
        warm_kb = server.rss_kb()
        for level in args.levels:
            print(f"Generate at {level} concurrent calls for {args.generate_seconds:g} s ...", flush=True)
            results.append(
                await drive(tools, server, f"Generate, {level} concurrent", GENERATE, level, args.generate_seconds)
            )
        if args.streams:
            print(f"{args.streams} concurrent Streams for {args.stream_seconds:g} s ...", flush=True)
            results.append(
                await drive(
                    tools, server, f"Stream, {args.streams} concurrent", STREAM, args.streams, args.stream_seconds
                )
            )
        # Memory that grows with the calls made (not with how many run at once) is a leak.
        loaded_kb = server.rss_kb()
    finally:
        server.stop()
    floors = await floor_phase(work, tools, args) if args.levels and not args.no_floor else []
    spun = [r for spin in args.floor_spin_us for r in await floor_phase(work, tools, args, spin)] if args.levels else []
    memories: list[Memory] = []
    if args.subscriptions:
        print(f"{args.subscriptions} idle Subscribes, then {args.generates} concurrent Generates ...", flush=True)
        fresh = start_agentd(work, "agentd", serve_args=serve_args)
        try:
            memory, load = await idle_phase(fresh, tools, args.subscriptions, args.generates, args.idle_seconds)
        finally:
            fresh.stop()
        memories.append(memory)
        if load is not None:
            results.append(load)
        bare = start_bare(work, loop=args.loop)
        try:
            memories.append((await idle_phase(bare, tools, args.subscriptions, 0, 0))[0])
        finally:
            bare.stop()
    print(
        f"\nload on one agentd serve --loop {args.loop} (echo model, memory storage), {os.cpu_count()} cores, loopback"
    )
    print_table(results)
    calls = sum(r.calls + r.error_count for r in results[: len(args.levels) + bool(args.streams)])
    print(f"  agentd's RSS: {warm_kb} kB after the warm-up, {loaded_kb} kB after these {calls} calls")
    if floors:
        print("\nGenerate beside a bare grpc.aio server answering the echo agent's reply (the same ghz command)")
        print_table(floors)
        for level, ours, floor in zip(args.levels, results, floors, strict=False):
            print(
                f"  at {level}: agentd's calls/s {ours.rps / floor.rps:.2f}x the bare server's,"
                f" its CPU per call {ours.per_call_us(ours.server_cpu) / floor.per_call_us(floor.server_cpu):.2f}x"
            )
    if spun:
        print("\nthe bare server again, its handler busy-waiting on the loop first (--floor-spin-us)")
        print_table(spun)
    if memories:
        print(f"\n{args.subscriptions} idle Subscribes opened at once on one channel (RSS from /proc/<pid>/status)")
        print_memory(memories)
    if args.profile and args.subscriptions:
        heaps = [
            await profile_phase(work, tools, args.subscriptions, bare=False),
            await profile_phase(work, tools, args.subscriptions, bare=True),
        ]
        print_split(memories, heaps)
    errors = sum(r.error_count for r in results + floors + spun) + sum(sum(m.errors.values()) for m in memories)
    opened = all(m.opened == m.subscriptions for m in memories)
    print(f"\nerrors: {errors}" + ("" if opened else " (not every subscription opened)"))
    return 0 if errors == 0 and opened else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", type=int, nargs="*", default=[50, 200, 500], help="Generate concurrencies")
    parser.add_argument("--generate-seconds", type=float, default=20)
    parser.add_argument("--streams", type=int, default=500, help="concurrent Streams (0: skip)")
    parser.add_argument("--stream-seconds", type=float, default=60)
    parser.add_argument("--subscriptions", type=int, default=2000, help="idle Subscribes (0: skip)")
    parser.add_argument("--generates", type=int, default=100, help="concurrent Generates beside them")
    parser.add_argument("--idle-seconds", type=float, default=20, help="how long those Generates run")
    parser.add_argument("--quick", action="store_true", help="every duration a few seconds: a smoke run")
    parser.add_argument("--profile", action="store_true", help="where the idle subscriptions' Python heap goes")
    parser.add_argument("--no-ghz", action="store_true", help="drive Generate and Stream from grpc.aio here")
    parser.add_argument(
        "--no-floor", action="store_true", help="skip the Generate levels against the bare grpc.aio server"
    )
    parser.add_argument(
        "--floor-spin-us",
        type=int,
        nargs="*",
        default=[],
        help="the floor again with its handler busy-waiting this many µs first (each value a run)",
    )
    parser.add_argument("--loop", choices=LOOPS, default="auto", help="agentd serve --loop (default: agentd's own)")
    parser.add_argument(
        "--no-ghz-templates",
        action="store_true",
        help="ghz --disable-template-data --disable-template-functions: less of the shared CPU for the caller",
    )
    args = parser.parse_args()
    if args.quick:
        args.generate_seconds = min(args.generate_seconds, 3)
        args.stream_seconds = min(args.stream_seconds, 5)
        args.idle_seconds = min(args.idle_seconds, 3)
    run_in_work_dir("agentd-bench-load-", run, args)


def run_in_work_dir(
    prefix: str, run: Callable[[argparse.Namespace, Path], Awaitable[int]], args: argparse.Namespace
) -> NoReturn:
    """Runs `run` in a fresh work directory (named at the end: the server logs are there) and exits with its code."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        code = asyncio.run(run(args, work))
    finally:
        print(f"(server logs in {work})")
    sys.exit(code)


if __name__ == "__main__":
    main()
