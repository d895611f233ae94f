"""persist_partial_on_abort over gRPC: an aborted thread-bound run saves its
input and the text streamed before the abort; never an empty reply; nothing by
default; harmless without memory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from agentd.runtime import Agent, Tool
from agentd.runtime.memory import Memory
from agentd.runtime.models.router import register_provider
from agentd.runtime.storage import InMemoryStorage, MessageQuery
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.server import Running, serving
from support.wire import drain
from support_models import HELD, held_model


async def hang(args: Any) -> Any:
    await asyncio.Event().wait()  # a tool still working when the abort comes


@pytest.fixture
async def running(storage: InMemoryStorage) -> AsyncIterator[Running]:
    register_provider(HELD, held_model)
    agents = [
        Agent(id="chat", model="held/scripted", memory=Memory(storage)),
        Agent(id="plain", model="held/scripted"),
        Agent(
            id="tools", model="local/scripted", memory=Memory(storage), tools=[Tool("lookup", "never answers", hang)]
        ),
    ]
    async with serving(agents, storage=storage) as running:
        yield running


def held(
    tmp_path: Path, *, after_deltas: int, thread: bool = True, persist: bool | None = True
) -> opb.ExecutionOptions:
    """A reply of four words that stops after `after_deltas` of them until aborted."""
    options = opb.ExecutionOptions()
    if thread:
        options.memory.CopyFrom(opb.MemoryOptions(resource="u1", thread_id="t1"))
    if persist is not None:
        options.persist_partial_on_abort = persist
    options.provider_options.update(
        {
            "local": {"script": [{"deltas": ["one ", "two ", "three ", "four"]}]},
            HELD: {"afterDeltas": after_deltas, "releaseFile": str(tmp_path / "never")},
        }
    )
    return options


async def stream_then_abort(running: Running, agent_id: str, options: opb.ExecutionOptions, deltas: int) -> list[Any]:
    """Streams until `deltas` text deltas went out, aborts, and reads the rest."""
    call = running.agents.Stream(apb.StreamRequest(agent_id=agent_id, text="tell me", options=options))
    chunks: list[Any] = []
    run_id = ""
    while sum(c.WhichOneof("payload") == "text_delta" for c in chunks) < deltas or not chunks:
        message = await call.read()
        assert message is not grpc.aio.EOF
        chunks.extend(message.chunks)
        run_id = chunks[0].run_id
    if options.HasField("memory"):
        aborted = await running.threads.AbortRun(tpb.AbortRunRequest(thread_id="t1"))
    else:
        aborted = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=run_id))
    assert aborted.aborted
    chunks.extend(await drain(call))
    await running.host.threads.settled(run_id)
    return chunks


async def stored(storage: InMemoryStorage) -> list[tuple[str, str]]:
    if await storage.get_thread("t1") is None:
        return []
    return [(m.role, m.text) for m in (await storage.list_messages(MessageQuery("t1"))).messages]


async def test_the_text_streamed_before_the_abort_is_saved(
    running: Running, storage: InMemoryStorage, tmp_path: Path
) -> None:
    chunks = await stream_then_abort(running, "chat", held(tmp_path, after_deltas=2), deltas=2)
    assert chunks[-1].abort.reason == "ABORTED"
    assert await stored(storage) == [("user", "tell me"), ("assistant", "one two ")]


async def test_nothing_is_saved_by_default(running: Running, storage: InMemoryStorage, tmp_path: Path) -> None:
    for persist in (None, False):
        await stream_then_abort(running, "chat", held(tmp_path, after_deltas=2, persist=persist), deltas=2)
    assert await stored(storage) == []


async def test_no_text_no_message(running: Running, storage: InMemoryStorage, tmp_path: Path) -> None:
    chunks = await stream_then_abort(running, "chat", held(tmp_path, after_deltas=0), deltas=0)
    assert not any(c.WhichOneof("payload") == "text_delta" for c in chunks)
    assert await stored(storage) == []  # never an empty assistant message (nor a lone input)


async def test_harmless_without_memory(running: Running, tmp_path: Path) -> None:
    chunks = await stream_then_abort(running, "plain", held(tmp_path, after_deltas=1, thread=False), deltas=1)
    assert chunks[-1].abort.reason == "ABORTED"
    assert not any(c.WhichOneof("payload") == "error" for c in chunks)


async def test_a_tool_call_left_unanswered_is_not_saved(running: Running, storage: InMemoryStorage) -> None:
    options = opb.ExecutionOptions(
        memory=opb.MemoryOptions(resource="u1", thread_id="t1"), persist_partial_on_abort=True
    )
    step = {
        "text": "let me look",
        "toolCalls": [{"id": "c1", "name": "lookup", "args": {}}],
        "finishReason": "tool-calls",
    }
    options.provider_options.update({"local": {"script": [step]}})
    call = running.agents.Stream(apb.StreamRequest(agent_id="tools", text="find it", options=options))
    chunks: list[Any] = []
    while not any(c.WhichOneof("payload") == "tool_call" for c in chunks):  # the tool is running now
        message = await call.read()
        assert message is not grpc.aio.EOF
        chunks.extend(message.chunks)
    assert (await running.threads.AbortRun(tpb.AbortRunRequest(thread_id="t1"))).aborted
    while await call.read() is not grpc.aio.EOF:
        pass
    await running.host.threads.settled(chunks[0].run_id)
    rows = (await storage.list_messages(MessageQuery("t1"))).messages
    assert [(m.role, m.text) for m in rows] == [("user", "find it"), ("assistant", "let me look")]
    assert all(p.type != "tool-call" for m in rows for p in m.parts)  # a prompt could not replay it
