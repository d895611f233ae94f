"""A run whose text totals more than [server] max_message_bytes: Stream and
Subscribe deliver its deltas in messages that fit, and a chunk that cannot fit
one message (the finish repeats the whole reply) ends the call with
RESOURCE_EXHAUSTED RESPONSE_TOO_LARGE after every chunk before it, never a
transport failure. A lower limit lowers the budget batches are split under."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import grpc
import pytest

from agentd.runtime import Agent, ModelEvent, ModelRequest, register_provider
from agentd.runtime.memory import Memory
from agentd.runtime.models.local import LocalModel
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.server import Running, serving
from support.wire import scripted
from support_models import FunctionModel

MB = 1024 * 1024
LIMIT = 256 * 1024


def deltas(size: int) -> list[str]:
    return [chr(ord("a") + i) * size for i in range(5)]


DELTAS = deltas(MB)  # 5 MiB of text in 1 MiB deltas: over the default 4 MiB


def big_model(model_id: str) -> FunctionModel:
    """`big/<size>`: the scripted model answering deltas(size) (made here: a
    request carrying them would itself be too large)."""
    script = {"local": {"script": [{"deltas": deltas(int(model_id))}]}}

    def reply(request: ModelRequest, call: int) -> AsyncIterator[ModelEvent]:
        return LocalModel("big").stream(replace(request, provider_options=script))

    return FunctionModel(reply, provider="big", model_id=model_id)


@pytest.fixture
async def running(storage: InMemoryStorage) -> AsyncIterator[Running]:
    register_provider("big", big_model)
    agents = [
        Agent(id="big", model=f"big/{MB}", memory=Memory(storage)),
        Agent(id="scripted", model="local/scripted"),
    ]
    async with serving(agents, storage=storage) as r:
        yield r


@pytest.fixture
async def limited() -> AsyncIterator[Running]:
    register_provider("big", big_model)
    async with serving([Agent(id="limited", model=f"big/{LIMIT // 2}")], max_message_bytes=LIMIT) as r:
        yield r


def check_too_large(error: grpc.aio.AioRpcError) -> None:
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error.details()
    assert rich_error(error).reason == "RESPONSE_TOO_LARGE"
    assert "max_message_bytes" in (error.details() or "")


async def test_stream_sends_every_delta_then_says_the_finish_is_too_large(running: Running) -> None:
    chunks = []
    call = running.agents.Stream(apb.StreamRequest(agent_id="big", text="x"))
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        async for message in call:
            assert message.ByteSize() <= 4 * MB
            chunks.extend(message.chunks)
    check_too_large(failed.value)
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "".join(DELTAS)
    assert [c.seq for c in chunks] == list(range(1, len(chunks) + 1))
    # The server is fine: a small run after it streams to its end.
    small = [
        c
        async for m in running.agents.Stream(
            apb.StreamRequest(agent_id="scripted", text="x", options=scripted({"text": "ok"}))
        )
        for c in m.chunks
    ]
    assert small[-1].HasField("finish")


async def test_subscribe_sends_every_delta_then_says_the_finish_is_too_large(running: Running) -> None:
    subscription = running.threads.Subscribe(tpb.SubscribeRequest(thread_id="t1", resource_id="u1"))
    snapshot = await subscription.read()
    assert snapshot.WhichOneof("event") == "snapshot"
    memory = opb.MemoryOptions(resource="u1", thread_id="t1")
    request = apb.StreamRequest(agent_id="big", text="x", options=opb.ExecutionOptions(memory=memory))
    with pytest.raises(grpc.aio.AioRpcError):
        async for _ in running.agents.Stream(request):
            pass
    text = ""
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        while (message := await subscription.read()) is not grpc.aio.EOF:
            assert message.ByteSize() <= 4 * MB
            text += "".join(c.text_delta.text for c in message.chunks.chunks if c.HasField("text_delta"))
    check_too_large(failed.value)
    assert text == "".join(DELTAS)
    # The error names the chunk, so a subscriber resumes after it instead of
    # meeting it again at every replay.
    named = rich_error(failed.value).metadata
    assert named["run_id"] and int(named["chunk_seq"]) > len(DELTAS)
    offset = int(named["chunk_offset"])
    resume = tpb.ResumePoint(log_epoch=snapshot.snapshot.log_epoch, after_offset=offset)
    again = running.threads.Subscribe(tpb.SubscribeRequest(thread_id="t1", resource_id="u1", resume=resume))
    first = await again.read()
    assert first.WhichOneof("event") == "snapshot" and first.snapshot.last_offset == offset
    again.cancel()


async def test_a_lower_limit_splits_batches_under_it(limited: Running) -> None:
    chunks = []
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        async for message in limited.agents.Stream(apb.StreamRequest(agent_id="limited", text="x")):
            assert message.ByteSize() <= LIMIT
            chunks.extend(message.chunks)
    check_too_large(failed.value)  # the finish: 640 KiB
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "".join(deltas(LIMIT // 2))
