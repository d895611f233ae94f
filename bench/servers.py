"""The processes the load benchmarks start: `agentd serve` (this
environment's, or another tree's by `command`) with bench/load.py's
agentd.toml, the bare grpc.aio server beside it, and what is read of them
from /proc (CPU seconds, RSS)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from agentd.grpc.server import SERVER_OPTIONS

ROOT = Path(__file__).resolve().parent.parent
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
BARE_SERVER = ROOT / "bench" / "bare_server.py"
BIN = Path(sys.executable).parent

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
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    """The process's CPU time so far, every thread's, user and system (`tid`: that thread's alone)."""
    stat = Path(f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat")
    # Fields after the command's ")" (which may hold spaces): utime and stime are the 12th and 13th.
    fields = stat.read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


@dataclass
class Server:
    name: str
    proc: subprocess.Popen[bytes]
    addr: str
    log: Path
    #: False for the bare grpc.aio server (bench/bare_server.py).
    agentd: bool = True

    @property
    def pid(self) -> int:
        return self.proc.pid

    def rss_kb(self) -> int:
        return rss_kb(self.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_agentd(
    work: Path,
    name: str,
    app: str | None = None,
    env: dict[str, str] | None = None,
    config_text: str = CONFIG,
    cwd: Path = ROOT,
    serve_args: tuple[str, ...] = (),
    command: list[str] | None = None,
) -> Server:
    """`agentd serve` with `config_text` as its agentd.toml (and `serve_args`); `app` is imported from `cwd`.
    `command` starts agentd in place of this environment's console script (bench/against.py's other tree)."""
    config = work / f"{name}.toml"
    config.write_text(config_text)
    port = free_port()
    log = work / f"{name}-{port}.log"
    args = [
        *(command or [str(BIN / "agentd")]),
        "serve",
        "--config",
        str(config),
        "--port",
        str(port),
        "--log-level",
        "WARNING",
    ]
    if app:
        args += ["--app", app]
    args += serve_args
    proc = subprocess.Popen(
        args, cwd=cwd, stdout=log.open("wb"), stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
    )
    return Server(name, proc, f"127.0.0.1:{port}", log)


#: `--loop`'s choices, as `agentd serve --loop` has them.
LOOPS = ("auto", "uvloop", "asyncio")


def serve_loop_args(loop: str) -> tuple[str, ...]:
    """`agentd serve`'s arguments for `loop` (none for auto: an older agentd has no such choice)."""
    return () if loop == "auto" else ("--loop", loop)


def start_bare(work: Path, name: str = "bare", env: dict[str, str] | None = None, loop: str = "auto") -> Server:
    """bench/bare_server.py, with the options agentd's server has, on event loop `loop`."""
    port = free_port()
    log = work / f"{name}-{port}.log"
    options = json.dumps([("grpc.so_reuseport", 0), *SERVER_OPTIONS])
    proc = subprocess.Popen(
        [sys.executable, str(BARE_SERVER), str(port), options, loop],
        cwd=ROOT,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
    )
    return Server(name, proc, f"127.0.0.1:{port}", log, agentd=False)


async def wait_ready(server: Server) -> None:
    deadline = time.monotonic() + 60
    while True:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.name} exited ({server.proc.returncode}); see {server.log}")
        try:
            async with grpc.aio.insecure_channel(server.addr) as channel:
                await asyncio.wait_for(channel.channel_ready(), 1)
                return
        except (TimeoutError, grpc.aio.AioRpcError):
            if time.monotonic() > deadline:
                raise
