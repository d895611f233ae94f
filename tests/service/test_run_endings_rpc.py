"""How runs end and what they keep, over gRPC: an abort while an error
processor waits to retry, an output processor's abort of a data chunk a tool
wrote, and data chunks marked transient."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.runtime import Agent, ExecutionOptions
from agentd.runtime.chunks import Chunk, Data
from agentd.runtime.memory import Memory
from agentd.runtime.messages import DataPart
from agentd.runtime.processors.base import ProcessAPIErrorArgs, Processor, ProcessOutputStreamArgs
from agentd.runtime.processors.builtins.stream_error_retry import StreamErrorRetryProcessor
from agentd.runtime.processors.factory import from_options
from agentd.runtime.storage import InMemoryStorage, MessageQuery
from agentd.runtime.tools import Tool, ToolContext
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from agentd_proto.v1 import usage_pb2 as upb
from support.server import Running, serving
from support.wire import drain, lane

# ---------------------------------------------------------------- an abort during a retry wait


class RetryWait:
    """A stream-error-retry processor that waits a minute before its retry,
    and says when it started waiting."""

    def __init__(self) -> None:
        self.waiting = asyncio.Event()

    def __call__(self, options: dict[str, Any]) -> StreamErrorRetryProcessor:
        def started(args: ProcessAPIErrorArgs, delay_ms: float) -> None:
            self.waiting.set()

        return StreamErrorRetryProcessor(delay_ms=60_000, on_retry=started)


@pytest.fixture
def retry_wait() -> RetryWait:
    return RetryWait()


@pytest.fixture
async def chat(retry_wait: RetryWait) -> AsyncIterator[Running]:
    storage = InMemoryStorage()
    agents = [
        Agent(id="chat", model="local/scripted", memory=Memory(storage)),
        # Its fallback model would answer, were the run to go on after the abort.
        Agent(id="fallback", model="local/scripted", memory=Memory(storage), fallback_models=["local/echo"]),
    ]
    async with serving(agents, storage=storage, processors={"retry-wait": retry_wait}) as running:
        yield running


@pytest.mark.parametrize("agent_id", ["chat", "fallback"])
async def test_an_abort_during_a_retry_wait_ends_the_stream_with_abort(
    chat: Running, retry_wait: RetryWait, agent_id: str
) -> None:
    options = opb.ExecutionOptions(
        memory=opb.MemoryOptions(resource="u1", thread_id="t1"), error_processors=lane(("retry-wait", {}))
    )
    # local/scripted fails; local/echo, the fallback, would answer.
    options.provider_options.update({"local": {"scripts": {"scripted": [{"error": {"message": "read ECONNRESET"}}]}}})
    call = chat.agents.Stream(apb.StreamRequest(agent_id=agent_id, text="hi", options=options))
    reading = asyncio.ensure_future(drain(call))
    await asyncio.wait_for(retry_wait.waiting.wait(), 30)

    aborted = await chat.threads.AbortRun(tpb.AbortRunRequest(thread_id="t1", resource_id="u1"))

    assert aborted.aborted
    chunks = await asyncio.wait_for(reading, 30)  # the minute's wait ended with the abort
    kinds = [c.WhichOneof("payload") for c in chunks]
    assert kinds[-1] == "abort" and "error" not in kinds and "text_delta" not in kinds, kinds
    assert chunks[-1].abort.reason == "ABORTED"


# ---------------------------------------------------------------- data chunks a tool writes


async def report(args: Any, ctx: ToolContext) -> str:
    await ctx.writer.custom("data-progress", {"done": 1})
    await ctx.writer.custom("data-scratch", {"note": "draft"}, transient=True)
    return "reported"


class DataGuard(Processor):
    """Blocks the stream at the first `data-progress` chunk."""

    id = "data-guard"
    process_data_parts = True

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        if args.part.type == "data-progress":
            args.abort("progress data is not allowed", metadata={"type": args.part.type})
        return args.part


class MarkTransient(Processor):
    """Marks every `data-progress` chunk transient: streamed, never kept."""

    id = "mark-transient"
    process_data_parts = True

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        payload = args.part.payload
        if isinstance(payload, Data) and payload.type == "data-progress":
            payload.transient = True
        return args.part


@pytest.fixture
async def reporter(storage: InMemoryStorage) -> AsyncIterator[Running]:
    agent = Agent(
        id="reporter",
        model="local/scripted",
        memory=Memory(storage),
        tools=[Tool("report", "Reports progress", report)],
        default_options=ExecutionOptions(
            provider_options={
                "local": {"script": [{"toolCalls": [{"id": "c1", "name": "report"}]}, {"text": "all done"}]}
            }
        ),
    )
    processors = {"data-guard": from_options(DataGuard), "mark-transient": from_options(MarkTransient)}
    async with serving([agent], storage=storage, processors=processors) as running:
        yield running


def report_request(*outputs: str) -> apb.StreamRequest:
    options = opb.ExecutionOptions(
        memory=opb.MemoryOptions(resource="u1", thread_id="t1"), output_processors=lane(*((n, {}) for n in outputs))
    )
    return apb.StreamRequest(agent_id="reporter", text="go", options=options)


async def test_an_output_processor_abort_on_a_tool_data_chunk_trips_the_run(
    reporter: Running, storage: InMemoryStorage
) -> None:
    chunks = await drain(reporter.agents.Stream(report_request("data-guard")))

    kinds = [c.WhichOneof("payload") for c in chunks]
    assert kinds[-2:] == ["tripwire", "finish"], kinds
    tripwire = chunks[-2].tripwire.tripwire
    assert (tripwire.processor_id, tripwire.reason) == ("data-guard", "progress data is not allowed")
    assert tripwire.metadata["type"] == "data-progress"
    assert chunks[-1].finish.finish_reason == upb.FINISH_REASON_OTHER
    assert "tool_result" not in kinds  # the tool did not fail: the stream was blocked
    assert not any(c.HasField("text_delta") for c in chunks)  # and the run went no further
    assert (await storage.list_messages(MessageQuery("t1"))).messages == []  # a tripped run saves nothing


async def test_a_data_chunk_marked_transient_is_streamed_but_never_kept(
    reporter: Running, storage: InMemoryStorage
) -> None:
    chunks = await drain(reporter.agents.Stream(report_request("mark-transient")))

    data = [(c.data.type, c.data.transient) for c in chunks if c.HasField("data")]
    assert data == [("data-progress", True), ("data-scratch", True)]
    finish = chunks[-1].finish
    kept = [p for m in finish.response_messages for p in m.parts if p.HasField("data")]
    assert kept == []
    stored = (await storage.list_messages(MessageQuery("t1"))).messages
    assert [m.role for m in stored] == ["user", "assistant", "assistant"]
    assert not any(isinstance(p, DataPart) for m in stored for p in m.parts)
