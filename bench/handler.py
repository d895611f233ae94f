"""agentd's own work per Generate, without the transport: the handler
`agentd serve` registers for AgentService.Generate (the caller's admission,
the servicer, the run, the reply's bytes) called in this process on the echo
agent with memory storage, one call after another, against a stand-in for
grpc's context. What is left once grpc's own per-call cost is taken out, and
so what any change to the runtime's hot path moves (bench/load.py shows what
that time costs under load).

    python bench/handler.py [--calls N]     µs of CPU per call (median of 5 rounds)
    python bench/handler.py --thrash 4      the same with 4 MiB touched between calls (their own time
                                            taken out): a cold cache, as under load
    python bench/handler.py --opcodes [K]   bytecodes and Python calls per call, top K functions

Prints figures, asserts nothing but that every reply echoes the request.
Under `valgrind --tool=callgrind`, (Ir at --calls 600 - Ir at --calls 200) /
2000 (five rounds each) is the instructions per call, the reply's check
included, steady to about 0.2%.
"""

from __future__ import annotations

import argparse
import collections
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Any

import grpc

from agentd.cli import build_host, run_loop
from agentd.grpc import service
from agentd.grpc.agent_service import AgentService
from agentd.grpc.chunks import batch_budget
from agentd.grpc.server import SERVICES
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc

CONFIG = """
[storage]
backend = "memory"

[[agents]]
id = "echo"
model = "local/echo"
"""
TEXT = "hello load"
ROOT = Path(__file__).resolve().parent.parent
Handler = Callable[[apb.GenerateRequest, Any], Awaitable[bytes]]


class Captured:
    """Takes the generic handlers `service.register` adds, as a server would."""

    def __init__(self) -> None:
        self.handlers: list[grpc.GenericRpcHandler[Any, Any]] = []

    def add_generic_rpc_handlers(self, handlers: tuple[grpc.GenericRpcHandler[Any, Any], ...]) -> None:
        self.handlers.extend(handlers)


class Details(grpc.HandlerCallDetails):
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


class Context:
    """What the handler asks of grpc's servicer context on a call that succeeds."""

    def time_remaining(self) -> float:
        return 60.0

    def code(self) -> None:
        return None

    def invocation_metadata(self) -> tuple[()]:
        return ()


def generate_handler(work: Path) -> tuple[Handler, apb.GenerateRequest]:
    config = work / "agentd.toml"
    config.write_text(CONFIG)
    _, host = build_host(str(config), None)
    captured = Captured()
    servicer = AgentService(host, batch_budget(4 * 1024 * 1024))
    base = agent_service_pb2_grpc.AgentServiceServicer
    service.register(captured, SERVICES[0], base, servicer, service.CallPolicy())  # type: ignore[arg-type]
    for generic in captured.handlers:
        found = generic.service(Details("/agentd.v1.AgentService/Generate"))
        if found is not None:
            decode = found.request_deserializer
            assert decode is not None
            request = decode(apb.GenerateRequest(agent_id="echo", text=TEXT).SerializeToString())
            handler: Handler = found.unary_unary  # type: ignore[assignment]
            return handler, request
    raise RuntimeError("no handler for AgentService/Generate")


async def calls(handler: Handler, request: apb.GenerateRequest, count: int, thrash: Thrash | None = None) -> None:
    context = Context()
    for _ in range(count):
        if thrash is not None:
            thrash()
        reply = apb.GenerateResponse.FromString(await handler(request, context))
        assert reply.text == TEXT, reply


class Thrash:
    """Writes a byte of every 64-byte line of `mib` MiB: what ghz, grpc's
    threads and the kernel do to the caches between two calls under load."""

    def __init__(self, mib: int) -> None:
        self.buffer = bytearray(mib << 20)
        self.zeros = bytes(len(self.buffer) // 64)

    def __call__(self) -> None:
        self.buffer[::64] = self.zeros

    def cost(self, count: int) -> float:
        """CPU seconds `count` thrashes take by themselves."""
        started = time.process_time()
        for _ in range(count):
            self()
        return time.process_time() - started


async def timed(count: int, mib: int) -> int:
    thrash = Thrash(mib) if mib else None
    with tempfile.TemporaryDirectory(prefix="agentd-bench-handler-") as work:
        handler, request = generate_handler(Path(work))
        await calls(handler, request, 500)
        gc.collect()
        rounds = []
        for _ in range(5):
            started = time.process_time()
            await calls(handler, request, count, thrash)
            spent = time.process_time() - started - (thrash.cost(count) if thrash is not None else 0.0)
            rounds.append(spent / count * 1e6)
    cold = f", {mib} MiB touched between calls" if mib else ""
    median = statistics.median(rounds)
    print(f"Generate's handler, in process{cold}: {median:.1f} µs of CPU a call (median of 5 x {count})")
    print("  rounds: " + ", ".join(f"{r:.1f}" for r in rounds))
    return 0


async def opcodes(top: int) -> int:
    count = 200
    by_function: collections.Counter[tuple[str, str]] = collections.Counter()
    entered: collections.Counter[tuple[str, str]] = collections.Counter()

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        key = (frame.f_code.co_filename, frame.f_code.co_name)
        if event == "call":  # (a coroutine or generator resumed counts as a call)
            entered[key] += 1
        elif event == "opcode":
            by_function[key] += 1
        return tracer

    with tempfile.TemporaryDirectory(prefix="agentd-bench-handler-") as work:
        handler, request = generate_handler(Path(work))
        await calls(handler, request, 500)
        context = Context()
        sys.settrace(tracer)
        try:
            for _ in range(count):
                await handler(request, context)
        finally:
            sys.settrace(None)
    total = sum(by_function.values())
    print(
        f"Generate's handler: {total / count:.0f} bytecodes and {sum(entered.values()) / count:.0f} Python calls a call"
    )
    print(f"  {'bytecodes':>9} {'calls':>6}  function")
    prefix = str(ROOT / "server") + "/"
    for (filename, name), n in by_function.most_common(top):
        where = filename.removeprefix(prefix)
        print(f"  {n / count:>9.1f} {entered[(filename, name)] / count:>6.1f}  {where}:{name}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20_000, help="calls per timed round")
    parser.add_argument(
        "--thrash", type=int, default=0, metavar="MIB", help="touch MIB MiB between calls (a cold cache, as under load)"
    )
    parser.add_argument("--opcodes", type=int, nargs="?", const=30, help="count bytecodes instead; top K functions")
    args = parser.parse_args()
    # On the loop `agentd serve` runs on by default (uvloop where it is installed).
    sys.exit(run_loop("auto", timed(args.calls, args.thrash) if args.opcodes is None else opcodes(args.opcodes)))


if __name__ == "__main__":
    main()
