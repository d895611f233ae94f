"""agentd's Python client cancels its call when the task reading it is
cancelled, whenever that happens. grpc.aio does so for a task cancelled
mid-read, but not for one cancelled while the call is still being set up,
and a dropped call is never collected (grpc/grpc#43462): without the
client's own cancel, that subscription or session stays open on the server
for as long as the channel does."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from agentd_client import AgentdClient

from support.polling import until
from support.server import Running, start_server

pytestmark = pytest.mark.timeout(90)

#: Delays that land some cancels in a call's set-up (a few in a hundred do).
DELAYS = (0.0, 0.0002, 0.0005, 0.001, 0.002, 0.004)
TRIES = 240


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    server = await start_server()
    try:
        yield server
    finally:
        await server.close()


async def cancelled_at_random(read: Callable[[int], Awaitable[None]]) -> None:
    rng = random.Random(20_261_201)
    for i in range(TRIES):
        task = asyncio.ensure_future(read(i))
        await asyncio.wait([task], timeout=rng.choice(DELAYS))
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_a_cancelled_subscription_leaves_the_server(running: Running) -> None:
    async with AgentdClient(running.addr) as client:

        async def read(i: int) -> None:
            async for _ in client.subscribe(f"t{i}", resource_id="u1"):
                pass

        await cancelled_at_random(read)
        await until(lambda: running.host.threads.log.subscribers(), holds=lambda n: n == 0, what="no subscriber left")


async def test_a_cancelled_connect_session_leaves_the_server(running: Running) -> None:
    async with AgentdClient(running.addr) as client:

        async def read(i: int) -> None:
            async with client.connect("echo", f"t{i}", resource_id="u1") as session:
                async for _ in session:
                    pass

        await cancelled_at_random(read)
        await until(lambda: running.host.threads.log.subscribers(), holds=lambda n: n == 0, what="no subscriber left")
