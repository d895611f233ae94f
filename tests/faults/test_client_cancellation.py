"""Clients that go away at random points: 240 Stream, Subscribe and Connect
calls against an in-process server, each cancelled after a random delay (from
before its first message to mid-run). Afterwards the process holds what it held
before: open file descriptors, asyncio tasks, live thread state, chunk logs,
active runs."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentd import config
from agentd.runtime.threads import ThreadSettings
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.polling import until
from support.server import Running, start_server

pytestmark = pytest.mark.timeout(90)

AGENTS = """
[storage]
backend = "memory"

[[agents]]
id = "slow"
model = "local/scripted"
default_options = { provider_options = { local = { script = [
  { deltas = ["a ", "b ", "c ", "d ", "e ", "f ", "g ", "h "], delayMs = 15 },
] } } }

[[agents]]
id = "thread-slow"
model = "local/scripted"
memory = { last_messages = 5 }
default_options = { provider_options = { local = { script = [
  { deltas = ["a ", "b ", "c ", "d ", "e ", "f ", "g ", "h "], delayMs = 15 },
] } } }
"""

CALLS = 240
AT_ONCE = 12
SEED = 20_260_601


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    (tmp_path / "agentd.toml").write_text(AGENTS)
    loaded = config.load(tmp_path / "agentd.toml", env={})
    # A log nobody watches goes 0.2 s after its last chunk (at the next log operation).
    server = await start_server(
        list(loaded.agents), storage=loaded.storage, thread_settings=ThreadSettings(log_idle_ttl=0.2)
    )
    try:
        yield server
    finally:
        await server.channel.close()
        await server.server.stop(0)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def threads_of(i: int) -> str:
    return f"cancel-t{i % 8}"


async def to_the_end(call: Any) -> None:
    """Reads a call to its end; a client that goes away cancels its call.

    grpc.aio cancels a call whose reading task is cancelled mid-read, but not
    one cancelled while the call is still being set up (the read awaits the
    set-up outside the handler that cancels), and since grpcio 1.83 a dropped
    call is never collected, so never cancelled by its finaliser
    (grpc/grpc#43462): to the server that client is still there, and it
    rightly keeps its subscription and its Connect session."""
    try:
        async for _ in call:
            pass
    finally:
        call.cancel()  # a no-op once the call is over


async def stream(running: Running, i: int) -> None:
    request = apb.StreamRequest(agent_id="slow", text=f"call {i}")
    if i % 2:  # half bound to a thread (a thread run: its caller going away aborts it)
        request = apb.StreamRequest(
            agent_id="thread-slow",
            text=f"call {i}",
            options=opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id=f"cancel-s{i}")),
        )
    await to_the_end(running.agents.Stream(request))


async def subscribe(running: Running, i: int) -> None:
    await to_the_end(running.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id=threads_of(i))))


async def connect(running: Running, i: int) -> None:
    async def frames() -> AsyncIterator[tpb.ConnectRequest]:
        yield tpb.ConnectRequest(
            request_id="open", open=tpb.ConnectOpen(agent_id="thread-slow", resource_id="u1", thread_id=threads_of(i))
        )
        yield tpb.ConnectRequest(
            request_id="send",
            send_message=tpb.ConnectSendMessage(message=spb.MessageInput(text=f"call {i}")),
        )
        await asyncio.Event().wait()  # the client keeps the stream open until it goes away

    await to_the_end(running.threads.Connect(frames()))


KINDS = (stream, subscribe, connect)


async def call_then_cancel(running: Running, i: int, delay: float) -> None:
    task = asyncio.ensure_future(KINDS[i % 3](running, i))
    done, _ = await asyncio.wait([task], timeout=delay)
    task.cancel()
    results = await asyncio.gather(task, return_exceptions=True)
    if done and isinstance(results[0], BaseException) and not isinstance(results[0], asyncio.CancelledError):
        raise results[0]  # a call that ended by itself before the cancel ended well


def task_names(tasks: set[asyncio.Task[object]]) -> list[str]:
    """Each task by its coroutine and where it is suspended, for a failure message."""
    named = []
    for task in tasks:
        frames = task.get_stack(limit=3)
        where = " <- ".join(f"{f.f_code.co_name}:{f.f_lineno}" for f in reversed(frames))
        coro = task.get_coro()
        named.append(f"{getattr(coro, '__qualname__', coro)!s} at {where}")
    return sorted(named)


def state(running: Running) -> dict[str, int]:
    host = running.host
    return {
        "fds": open_fds(),
        "tasks": len(asyncio.all_tasks()),
        "threads": len(host.threads),
        "logs": len(host.threads.log),  # type: ignore[arg-type]
        "active runs": len(host.runs.active()),
    }


async def settled(running: Running, baseline: dict[str, int]) -> bool:
    # A join and leave on a fresh thread: the log's next operation drops the idle logs.
    probe = running.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id="cancel-probe"))
    await probe.read()
    probe.cancel()
    await asyncio.sleep(0.05)
    return state(running) == baseline


async def test_random_client_cancellation_leaves_nothing_behind(running: Running) -> None:
    # Warm up every path once (grpc and the runtime start some things lazily), to completion.
    for i in range(3):
        await call_then_cancel(running, i, 1.0)
    await until(lambda: settled(running, state(running)), within=5, what="the warm-up to settle", step=0.1)
    await asyncio.sleep(0.5)
    await settled(running, {})
    baseline = state(running)
    before = asyncio.all_tasks()
    assert baseline["threads"] == 0 and baseline["active runs"] == 0, baseline

    rng = random.Random(SEED)
    delays = [rng.choice((0.0, 0.001, rng.uniform(0.0, 0.2))) for _ in range(CALLS)]
    for start in range(0, CALLS, AT_ONCE):
        batch = range(start, min(start + AT_ONCE, CALLS))
        await asyncio.wait_for(asyncio.gather(*(call_then_cancel(running, i, delays[i]) for i in batch)), 20)

    now: dict[str, int] = {}

    async def back() -> bool:
        ok = await settled(running, baseline)
        now.update(state(running))
        return ok

    try:
        await until(back, within=15, what="the process to hold what it held before", step=0.2)
    except AssertionError:
        tasks = asyncio.all_tasks() - before
        extra = "\n  ".join(task_names(tasks))
        raise AssertionError(
            f"baseline {baseline}, now {now} (seed {SEED}); tasks not there before:\n  {extra}"
        ) from None
