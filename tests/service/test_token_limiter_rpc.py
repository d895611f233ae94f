"""token-limiter over gRPC: the notice when output is withheld, `limit: 0`, and
`trimMode: "memory-only"` (recalled history trimmed, the current turn never)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from agentd.runtime import Agent, Message
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage, Thread
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from support.server import Running, serving
from support.wire import lane, scripted


def limiter(which: str, **options: Any) -> dict[str, opb.ProcessorList]:
    return {which: lane(("token-limiter", options))}


@pytest.fixture
async def running(storage: InMemoryStorage) -> AsyncIterator[Running]:
    agents = [Agent(id="echo", model="local/scripted"), Agent(id="chat", memory=Memory(storage, last_messages=50))]
    async with serving(agents, storage=storage) as running:
        yield running


async def stream(running: Running, agent_id: str, text: str, options: opb.ExecutionOptions) -> list[Any]:
    call = running.agents.Stream(apb.StreamRequest(agent_id=agent_id, text=text, options=options))
    return [chunk async for message in call for chunk in message.chunks]


def kinds(chunks: list[Any]) -> list[str]:
    return [str(c.WhichOneof("payload")) for c in chunks]


def notices(chunks: list[Any]) -> list[dict[str, Any]]:
    return [
        json_format.MessageToDict(c.data.data)
        for c in chunks
        if c.WhichOneof("payload") == "data" and c.data.type == "data-token-limit-reached"
    ]


async def test_one_notice_when_output_is_withheld(running: Running) -> None:
    words = " ".join(f"word{i}" for i in range(40))
    chunks = await stream(running, "echo", "hi", scripted({"text": words}, **limiter("output_processors", limit=5)))
    shown = "".join(c.text_delta.text for c in chunks if c.WhichOneof("payload") == "text_delta")
    assert shown and len(shown) < len(words)  # the start went out, the rest was withheld
    [notice] = notices(chunks)  # one, however many deltas were withheld after it
    assert notice["processorId"] == "token-limiter" and notice["limit"] == 5 and notice["tokens"] > 5
    [data] = [c for c in chunks if c.WhichOneof("payload") == "data"]
    assert data.data.transient
    finish = chunks[-1].finish
    assert all(p.WhichOneof("part") != "data" for m in finish.response_messages for p in m.parts)


async def test_limit_zero_withholds_everything(running: Running) -> None:
    options = scripted({"text": "not a word of this"}, **limiter("output_processors", limit=0))
    chunks = await stream(running, "echo", "hi", options)
    assert "text_delta" not in kinds(chunks)
    assert [n["limit"] for n in notices(chunks)] == [0]
    assert kinds(chunks)[-1] == "finish"


async def test_limit_zero_in_generate_empties_the_text(running: Running) -> None:
    options = scripted({"text": "nothing"}, **limiter("output_processors", limit=0))
    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="hi", options=options))
    assert reply.text == ""


async def test_a_negative_limit_is_invalid_argument(running: Running) -> None:
    options = scripted({"text": "x"}, **limiter("output_processors", limit=-1))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="hi", options=options))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def history(storage: InMemoryStorage, count: int) -> list[Message]:
    """A thread `t1` of `count` earlier exchanges, oldest first."""
    await storage.save_thread(Thread("t1", "u1"))
    messages: list[Message] = []
    for i in range(count):
        messages.append(Message.user(f"old question {i} " + "filler " * 20))
        messages.append(Message(role="assistant", parts=Message.user(f"old answer {i}").parts))
    for message in messages:
        message.thread_id, message.resource_id = "t1", "u1"
    await storage.save_messages(messages)
    return messages


def memory_options(**limits: Any) -> opb.ExecutionOptions:
    return opb.ExecutionOptions(
        memory=opb.MemoryOptions(resource="u1", thread_id="t1"), **limiter("input_processors", **limits)
    )


async def test_memory_only_trims_the_oldest_recalled_history_with_headroom(
    running: Running, storage: InMemoryStorage, model_calls: list[list[str]]
) -> None:
    await history(storage, 10)
    await stream(running, "chat", "the new question", memory_options(limit=400, trimMode="memory-only"))
    sent = model_calls[0]
    assert sent[-1] == "the new question"
    kept = [int(t.split()[2]) for t in sent[:-1]]
    assert kept and kept == list(range(10 - len(kept), 10))  # the newest recalled questions, in order
    assert len(kept) < 10
    # The default headroom (a quarter of the limit) frees more than the bare minimum.
    await stream(running, "chat", "again", memory_options(limit=400, trimMode="memory-only", atMaxRemoveTokens=0))
    assert len(model_calls[1]) - 1 > len(kept)


async def test_memory_only_never_trims_the_current_turn(
    running: Running, storage: InMemoryStorage, model_calls: list[list[str]]
) -> None:
    await history(storage, 3)
    long_input = "the current turn " * 200  # alone over the limit
    chunks = await stream(running, "chat", long_input, memory_options(limit=50, trimMode="memory-only"))
    assert "tripwire" not in kinds(chunks) and kinds(chunks)[-1] == "finish"
    assert model_calls[0] == [long_input]  # every recalled message went, the input stayed
    # best-fit, by contrast, has nothing it may send and trips.
    chunks = await stream(running, "chat", long_input, memory_options(limit=50))
    assert "tripwire" in kinds(chunks)


async def test_memory_only_leaves_output_alone(running: Running) -> None:
    reply = await running.agents.Generate(
        apb.GenerateRequest(
            agent_id="echo",
            text="hi",
            options=scripted(
                {"text": "a long answer " * 20}, **limiter("output_processors", limit=3, trimMode="memory-only")
            ),
        )
    )
    assert reply.text == "a long answer " * 20
