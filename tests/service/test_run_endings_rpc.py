"""How runs end and what they keep, over gRPC: an abort while an error
processor waits to retry, an output processor's abort of a tool's data chunk,
transient data chunks, and processors that keep their own state."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.processors.base import ProcessAPIErrorArgs
from agentd.runtime.processors.builtins.stream_error_retry import StreamErrorRetryProcessor
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.server import Running, serving


def lane(*specs: tuple[str, dict[str, Any]]) -> opb.ProcessorList:
    refs = []
    for name, options in specs:
        spec = opb.ProcessorSpec(name=name)
        spec.options.update(options)
        refs.append(opb.ProcessorRef(processor=spec))
    return opb.ProcessorList(processors=refs)


def scripted(*steps: dict[str, Any], **fields: Any) -> opb.ExecutionOptions:
    options = opb.ExecutionOptions(**fields)
    options.provider_options.update({"local": {"script": list(steps)}})
    return options


async def read_all(call: Any) -> list[Any]:
    chunks = []
    while (message := await call.read()) is not grpc.aio.EOF:
        chunks.extend(message.chunks)
    return chunks


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
    agents = [Agent(id="chat", model="local/scripted", memory=Memory(storage))]
    async with serving(agents, storage=storage, processors={"retry-wait": retry_wait}) as running:
        yield running


async def test_an_abort_during_a_retry_wait_ends_the_stream_with_abort(chat: Running, retry_wait: RetryWait) -> None:
    options = scripted(
        {"error": {"message": "read ECONNRESET"}},
        {"text": "never sent"},
        memory=opb.MemoryOptions(resource="u1", thread_id="t1"),
        error_processors=lane(("retry-wait", {})),
    )
    call = chat.agents.Stream(apb.StreamRequest(agent_id="chat", text="hi", options=options))
    reading = asyncio.ensure_future(read_all(call))
    await asyncio.wait_for(retry_wait.waiting.wait(), 30)

    aborted = await chat.threads.AbortRun(tpb.AbortRunRequest(thread_id="t1", resource_id="u1"))

    assert aborted.aborted
    chunks = await asyncio.wait_for(reading, 30)  # the minute's wait ended with the abort
    kinds = [c.WhichOneof("payload") for c in chunks]
    assert kinds[-1] == "abort" and "error" not in kinds, kinds
    assert chunks[-1].abort.reason == "ABORTED"
