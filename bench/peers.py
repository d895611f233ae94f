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
hits every side alike, each side going first in one run of three. Every
workload checks its own output (the text, the count, the model calls), so no
side is fast by doing less. Prints the table with the ratios and the goals
(`make bench-peers`; exits 1 when a check fails, never for a goal missed).

    python bench/peers.py [--runs 3] [--quick]
    python bench/peers.py --profile DIR [--only stream0 ...]   (py-spy on agentd's server and client)

The client is bench/peers_client.py, a process of its own each run.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import servers
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "bench" / "peers"
MASTRA = PEERS / "mastra.mjs"
CLIENT = ROOT / "bench" / "peers_client.py"

#: bench/load.py's agentd.toml (the echo agent), and the agents of the processor and cache workloads.
CONFIG = (
    servers.CONFIG
    + """
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
)

#: `agentd serve --loop` (--loop here).
LOOP = ["auto"]

#: What cold start measures on agentd's side: `agentd serve` with one echo agent, no --app.
COLD_CONFIG = servers.CONFIG

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


# ---------------------------------------------------------------- the driver


class CheckFailed(Exception):
    pass


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


def run_client(workload: str, addr: str, params: dict[str, Any], spy: list[str] | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [*(spy or []), sys.executable, str(CLIENT), workload, addr, json.dumps(params)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise CheckFailed(f"client {workload} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return last_json(proc.stdout, f"client {workload}")


async def until_serving(server: servers.Server) -> None:
    """Polls health from the moment of exec until the server answers SERVING."""
    deadline = time.monotonic() + 60
    # Reconnect at once: grpc's default backoff after the first refused connect
    # (about 1 s) would be measured as start-up.
    fast = [(f"grpc.{k}_reconnect_backoff_ms", 1) for k in ("initial", "min", "max")]
    async with grpc.aio.insecure_channel(server.addr, options=fast) as channel:
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


def py_spy(out: Path) -> list[str]:
    """py-spy recording collapsed stacks (`pip install py-spy`), idle frames left out."""
    binary = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if binary is None:
        raise SystemExit("--profile needs py-spy: .venv/bin/pip install py-spy")
    # --native: grpc's Cython and C frames, which are most of a call's time.
    return [binary, "record", "--format", "raw", "--rate", "250", "--native", "-o", str(out)]


def run_agentd(work: Path, workload: str, params: dict[str, Any], profile: Path | None = None) -> dict[str, Any]:
    start = time.perf_counter()
    serve_args = servers.serve_loop_args(LOOP[0])
    if workload == "cold":
        server = servers.start_agentd(work, "cold", config_text=COLD_CONFIG, serve_args=serve_args)
    else:
        server = servers.start_agentd(
            work, "agentd", app="agentd_app", config_text=CONFIG, cwd=PEERS, serve_args=serve_args
        )
    spy: subprocess.Popen[bytes] | None = None
    try:
        asyncio.run(until_serving(server))
        if workload == "cold":
            return {"cold_ms": (time.perf_counter() - start) * 1e3, "peak_rss_kb": peak_rss_kb(server.pid)}
        if profile is not None:
            spy = subprocess.Popen(
                [*py_spy(profile / f"{workload}-server.txt"), "--pid", str(server.pid)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(0.5)  # attached before the first call
        client_spy = [*py_spy(profile / f"{workload}-client.txt"), "--"] if profile is not None else None
        result = run_client(workload, server.addr, params, client_spy)
        result["peak_rss_kb"] = peak_rss_kb(server.pid)
        return result
    finally:
        server.stop()
        if spy is not None:
            spy.wait(timeout=30)  # it writes its file when the server exits


#: Files whose frames are under everything (the loop, threads, the entry point).
SCAFFOLDING = re.compile(r"(asyncio/|threading\.py|selectors\.py|agentd/cli\.py|runpy\.py)")


def top_frames(path: Path, count: int = 20) -> list[str]:
    """From py-spy's collapsed stacks: the frames most often on top of the
    stack (self time, any code), and agentd's (or the client's) functions most
    often on it at all (inclusive), as printable lines."""
    own: collections.Counter[str] = collections.Counter()
    anywhere: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if "_find_and_load" in stack:
            continue  # the process's imports, before anything is timed
        frames = stack.split(";")
        total += int(n)
        own[re.sub(r"\((?:.*/)?(?:site-packages|server)/", "(", frames[-1])] += int(n)
        python = (re.match(r"(.*) \((.*\.py):\d+\)$", f) for f in frames)
        for frame in {f"{m[1]} ({m[2]})" for m in python if m and not SCAFFOLDING.match(m[2])}:
            anywhere[frame] += int(n)
    lines = [f"{path.name}: {total} samples; self"]
    lines += [f"  {n / total:6.1%}  {frame}" for frame, n in own.most_common(count)]
    lines.append("inclusive (Python functions, the event loop's and threads' own left out)")
    lines += [f"  {n / total:6.1%}  {frame}" for frame, n in anywhere.most_common(count)]
    return lines


def run_bare(work: Path, workload: str, params: dict[str, Any]) -> dict[str, Any]:
    server = servers.start_bare(work, loop=LOOP[0])  # the floor on agentd's loop
    try:
        asyncio.run(servers.wait_ready(server))
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
    parser.add_argument("--loop", choices=servers.LOOPS, default="auto", help="agentd serve --loop (default: its own)")
    parser.add_argument("--no-mastra", action="store_true", help="agentd and the bare server only (while developing)")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="record agentd's server and client under py-spy into DIR (one run, agentd only) and print the top frames",
    )
    args = parser.parse_args()
    if not args.no_mastra and not (PEERS / "node_modules" / "@mastra" / "core").exists():
        print("bench/peers/node_modules is missing: run `npm ci` in bench/peers (make bench-peers does)")
        return 1
    plan = QUICK if args.quick else FULL
    LOOP[0] = args.loop
    workloads = [w for w in plan if args.only is None or w in args.only]
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="agentd-peers-") as tmp:
            for workload in (w for w in workloads if w != "cold"):
                run_agentd(Path(tmp), workload, plan[workload], args.profile)
                for side in ("server", "client"):
                    lines = top_frames(args.profile / f"{workload}-{side}.txt")
                    (args.profile / f"{workload}-{side}.top.txt").write_text("\n".join(lines) + "\n")
                    print("\n".join(lines[:12]))
        return 0
    # results[side][workload] = one dict per run
    results: dict[str, dict[str, list[dict[str, Any]]]] = {"mastra": {}, "agentd": {}, "bare": {}}
    bare_workloads = {row.workload for row in ROWS if row.bare}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="agentd-peers-") as tmp:
        work = Path(tmp)
        try:
            replies: dict[str, str] = {}  # agentd's serialised reply, which the bare server is sent back
            for run in range(args.runs):
                # The sides take turns going first: whichever runs first in a
                # round came out ahead here, whatever it was.
                sides = ["mastra", "agentd", "bare"]
                sides = sides[run % 3 :] + sides[: run % 3]
                for workload in workloads:
                    params = plan[workload]
                    for side in sides:
                        if side == "mastra" and not args.no_mastra:
                            results["mastra"].setdefault(workload, []).append(run_mastra(workload, params))
                        elif side == "agentd":
                            agentd = run_agentd(work, workload, params)
                            replies.setdefault(workload, agentd.get("reply_hex", ""))
                            results["agentd"].setdefault(workload, []).append(agentd)
                        elif side == "bare" and workload in bare_workloads:
                            if workload not in replies:  # the first run's agentd goes before its bare server
                                raise CheckFailed(f"no agentd reply for the bare {workload} yet")
                            bare_params = {**params, "reply_hex": replies[workload]}
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

    installed = PEERS / "node_modules" / "@mastra" / "core" / "package.json"
    mastra_version = json.loads(installed.read_text())["version"] if installed.exists() else "(not installed)"
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    print(
        f"\nagentd beside Mastra {mastra_version} in-process (Node {node}), median of {args.runs} fresh processes"
        f"{' (--quick)' if args.quick else ''}; {os.cpu_count()} cores, {platform.processor() or platform.machine()},"
        f" {time.strftime('%Y-%m-%d')}, {elapsed:.0f} s; agentd serve --loop {args.loop}"
    )
    print("| figure | unit | Mastra | agentd | bare grpc.aio | agentd / Mastra | goal | met |")
    print("|---|---|---|---|---|---|---|---|")
    for row in ROWS:
        if row.workload != "rss" and row.workload not in workloads:
            continue
        m, a = median("mastra", row.workload, row.key), median("agentd", row.workload, row.key)
        b = median("bare", row.workload, row.key) if row.bare else None
        if a is None:
            continue
        if m is None and "Mastra" in row.goal:
            met = "-"
        else:
            met = ("yes" if row.met(m or float("nan"), a, b) else "**no**") if row.goal else ""
        ratio = f"{a / m:.2f}x" if m else "-"
        print(
            f"| {row.figure} | {row.unit} | {fmt(m, row.unit)} | {fmt(a, row.unit)} | {fmt(b, row.unit)} |"
            f" {ratio} | {row.goal} | {met} |"
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
