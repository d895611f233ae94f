"""Stream and Subscribe coalesce a fast run's chunks into few messages
(`[server] stream_linger_ms`), in order and whole; a held run's chunks still go
out while it waits, a cancel mid-linger aborts the run cleanly, and 0 sends
what is ready at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.models.router import register_provider
from agentd.runtime.storage import InMemoryStorage
from agentd.runtime.threads import ThreadSettings
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.polling import until
from support.server import Running, serving
from support_models import HELD, held_model

WORDS = 2000
TEXT = "".join(f"w{i} " for i in range(WORDS))
DELTAS = tuple(f"w{i} " for i in range(60))


@pytest.fixture
async def running(storage: InMemoryStorage) -> AsyncIterator[Running]:
    register_provider(HELD, held_model)
    agents = [
        Agent(id="echo", model="local/echo", memory=Memory(storage)),
        Agent(id="held", model="held/scripted"),
    ]
    # A subscriber may lag the whole run: what is checked is how its chunks are
    # batched, not whether a loaded machine keeps it within the default buffer.
    settings = ThreadSettings(subscriber_buffer=4 * WORDS)
    async with serving(agents, storage=storage, thread_settings=settings) as running:
        yield running


def held(tmp_path: Path, deltas: tuple[str, ...] = ("good ", "morning"), after: int = 1) -> opb.ExecutionOptions:
    """`deltas`, those from number `after` on held until the file `release` exists."""
    options = opb.ExecutionOptions()
    options.provider_options.update(
        {
            "local": {"script": [{"deltas": list(deltas)}]},
            HELD: {"afterDeltas": after, "releaseFile": str(tmp_path / "release")},
        }
    )
    return options


def check_whole(chunks: list[Any]) -> None:
    """One run's chunks: every seq once, in order, the echo's text intact, then its finish."""
    assert [c.seq for c in chunks] == list(range(1, len(chunks) + 1))
    assert "".join(c.text_delta.text for c in chunks if c.WhichOneof("payload") == "text_delta") == TEXT
    assert chunks[-1].WhichOneof("payload") == "finish"


async def test_a_fast_runs_deltas_arrive_in_far_fewer_messages_than_chunks(running: Running) -> None:
    messages = [m async for m in running.agents.Stream(apb.StreamRequest(agent_id="echo", text=TEXT))]
    chunks = [c for m in messages for c in m.chunks]
    check_whole(chunks)
    assert len(chunks) > WORDS
    assert len(messages) <= len(chunks) // 10, f"{len(messages)} messages for {len(chunks)} chunks"


async def test_a_subscriber_gets_a_fast_runs_chunks_in_far_fewer_messages(running: Running) -> None:
    subscription = running.threads.Subscribe(tpb.SubscribeRequest(thread_id="t1", resource_id="u1"))
    assert (await subscription.read()).WhichOneof("event") == "snapshot"
    options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t1"))
    streamed = [
        c
        async for m in running.agents.Stream(apb.StreamRequest(agent_id="echo", text=TEXT, options=options))
        for c in m.chunks
    ]
    check_whole(streamed)
    messages, chunks = 0, []
    while not chunks or chunks[-1].WhichOneof("payload") != "finish":
        message = await subscription.read()
        assert message is not grpc.aio.EOF and message.WhichOneof("event") == "chunks"
        messages += 1
        chunks.extend(message.chunks.chunks)
    subscription.cancel()
    check_whole(chunks)
    assert [c.offset for c in chunks] == sorted({c.offset for c in chunks})  # logged once each, in order
    assert messages <= len(chunks) // 10, f"{messages} messages for {len(chunks)} chunks"


async def read_until_delta(call: Any, text: str) -> list[Any]:
    chunks: list[Any] = []
    while not any(c.text_delta.text == text for c in chunks if c.WhichOneof("payload") == "text_delta"):
        message = await call.read()
        assert message is not grpc.aio.EOF
        chunks.extend(message.chunks)
    return chunks


async def held_stream_pauses_after_its_burst(running: Running, tmp_path: Path) -> None:
    """A burst of 50 deltas, then the model waits (as a slow model or a tool
    does) until the test lets it go on: the burst's last delta arrives during
    the wait, and what follows only after."""
    call = running.agents.Stream(apb.StreamRequest(agent_id="held", text="hi", options=held(tmp_path, DELTAS, 50)))
    before = await asyncio.wait_for(read_until_delta(call, "w49 "), 30)
    assert [c.text_delta.text for c in before if c.WhichOneof("payload") == "text_delta"] == list(DELTAS[:50])
    (tmp_path / "release").touch()  # only now may the model go on
    after: list[Any] = []
    while (message := await call.read()) is not grpc.aio.EOF:
        after.extend(message.chunks)
    assert [c.text_delta.text for c in after if c.WhichOneof("payload") == "text_delta"] == list(DELTAS[50:])
    assert after[-1].WhichOneof("payload") == "finish"


async def test_a_pausing_runs_chunks_go_out_before_it_goes_on(running: Running, tmp_path: Path) -> None:
    await held_stream_pauses_after_its_burst(running, tmp_path)


async def test_linger_0_sends_what_is_ready_at_once(running: Running, tmp_path: Path) -> None:
    running.host.runs.linger = 0.0
    await held_stream_pauses_after_its_burst(running, tmp_path)
    messages = [m async for m in running.agents.Stream(apb.StreamRequest(agent_id="echo", text=TEXT))]
    check_whole([c for m in messages for c in m.chunks])


async def test_cancelling_a_stream_mid_linger_aborts_its_run_and_leaves_no_task(
    running: Running, tmp_path: Path
) -> None:
    running.host.runs.linger = 3600.0  # what comes after the first message waits on the linger
    tasks_before = asyncio.all_tasks()
    options = held(tmp_path, DELTAS, after=50)
    call = running.agents.Stream(apb.StreamRequest(agent_id="held", text="hi", options=options))
    first = await call.read()
    run_id = first.chunks[0].run_id
    handle = running.host.runs.get(run_id)
    assert handle is not None
    buffer = handle.buffer
    # The model holds after 50 deltas; the stream lingers for more (it waits on a longer log than there is).
    await until(
        lambda: (
            sum(c.type == "text-delta" for c in buffer.snapshot()) == 50
            and any(k > len(buffer) + 1 for k in buffer._waiters)
        ),
        what="the stream lingering while the model holds",
    )
    call.cancel()
    await asyncio.wait_for(running.host.runs.wait_finished(run_id), 10)
    result = await handle.result()
    assert result.aborted is not None and result.aborted.reason == "CALLER_CANCELLED"
    assert buffer.closed and not buffer._waiters

    def ours() -> set[asyncio.Task[Any]]:  # besides grpc's own, waiting for the server's next call
        new = asyncio.all_tasks() - tasks_before - {asyncio.current_task()}
        return {t for t in new if t.get_coro().__qualname__ != "AioServer._request_call"}  # type: ignore[union-attr]

    await until(ours, holds=lambda left: not left, what="the call's task and the run's gone")
