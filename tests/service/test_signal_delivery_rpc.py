"""What a signal does on a thread whose run is active, over gRPC: an agent's
per-category policy (`signal_delivery = {user = "queue"}`), a signal from
another agent (queued behind the run, never THREAD_BUSY), and the signal types
the contract accepts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.signals import from_db_message
from agentd.runtime.storage import InMemoryStorage, MessageQuery
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from support.errors import rich_error
from support.server import Running, serving
from support.wire import drain

T = spb.SignalTarget(resource_id="u1", thread_id="t1")


@pytest.fixture
async def running(storage: InMemoryStorage) -> AsyncIterator[Running]:
    agents = [
        Agent(id="chat", memory=Memory(storage)),
        Agent(id="turns", memory=Memory(storage), signal_delivery={"user": "queue", "reactive": "persist"}),
        Agent(id="other", memory=Memory(storage)),
    ]
    async with serving(agents, storage=storage) as running:
        yield running


async def start_slow_run(running: Running, agent_id: str, words: int = 20) -> tuple[Any, str]:
    options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t1"))
    options.provider_options.update({"local": {"delayMs": 30}})
    call = running.agents.Stream(apb.StreamRequest(agent_id=agent_id, text=" ".join(["w"] * words), options=options))
    first = await call.read()
    return call, first.chunks[0].run_id


async def send(running: Running, agent_id: str, text: str, **kwargs: Any) -> spb.RoutingDecision:
    reply = await running.signals.SendMessage(
        sspb.SendMessageRequest(agent_id=agent_id, target=T, message=spb.MessageInput(text=text), **kwargs)
    )
    return reply.decision


async def test_a_user_queue_policy_queues_messages_while_a_run_is_active(
    running: Running, model_calls: list[list[str]]
) -> None:
    call, run_id = await start_slow_run(running, "turns")
    decision = await send(running, "turns", "next question")
    assert decision.WhichOneof("action") == "deliver"
    queued = decision.deliver.run_id
    assert queued and queued != run_id  # a run of its own, not the active one
    chunks = await drain(call)
    assert not any(c.WhichOneof("payload") == "signal" for c in chunks)  # the active run never saw it
    await asyncio.wait_for(running.host.runs.wait_finished(queued), 10)
    assert len(model_calls) == 2 and model_calls[1][-1] == "next question"


async def test_an_explicit_behaviour_overrides_the_policy(running: Running, model_calls: list[list[str]]) -> None:
    call, run_id = await start_slow_run(running, "turns")
    decision = await send(running, "turns", "steer now", if_active=spb.IfActive(behavior=spb.ACTIVE_BEHAVIOR_DELIVER))
    assert (decision.WhichOneof("action"), decision.deliver.run_id) == ("deliver", run_id)
    await drain(call)
    assert len(model_calls) == 2 and model_calls[1][-1] == "steer now"


async def test_the_policy_is_per_category(running: Running, storage: InMemoryStorage) -> None:
    call, _ = await start_slow_run(running, "turns")
    reply = await running.signals.SendSignal(
        sspb.SendSignalRequest(agent_id="turns", target=T, signal=spb.SignalInput(type="reactive", text="fyi"))
    )
    assert reply.decision.WhichOneof("action") == "persist"  # reactive = "persist"
    await drain(call)
    rows = (await storage.list_messages(MessageQuery("t1", include_system_reminders=True))).messages
    assert [m.role for m in rows].count("signal") == 1


async def test_without_a_policy_a_message_joins_the_active_run(running: Running) -> None:
    call, run_id = await start_slow_run(running, "chat")
    decision = await send(running, "chat", "also this")
    assert (decision.WhichOneof("action"), decision.deliver.run_id) == ("deliver", run_id)
    await drain(call)


async def test_a_signal_from_another_agent_waits_for_the_active_run(
    running: Running, storage: InMemoryStorage, model_calls: list[list[str]]
) -> None:
    call, run_id = await start_slow_run(running, "chat")
    decision = await send(running, "other", "from the other agent")
    assert decision.WhichOneof("action") == "deliver"
    queued = decision.deliver.run_id
    assert queued and queued != run_id
    chunks = await drain(call)
    assert chunks[-1].WhichOneof("payload") == "finish"  # never interrupted
    assert not any(c.WhichOneof("payload") == "signal" for c in chunks)
    await asyncio.wait_for(running.host.runs.wait_finished(queued), 10)
    assert model_calls[-1][-1] == "from the other agent"
    rows = (await storage.list_messages(MessageQuery("t1"))).messages
    assert [m.role for m in rows] == ["user", "assistant", "signal", "assistant"]  # after the run it waited for


async def test_a_queued_message_is_stored_after_the_reply_it_waited_for(
    running: Running, storage: InMemoryStorage
) -> None:
    call, _ = await start_slow_run(running, "turns")
    queued = (await send(running, "turns", "my next question")).deliver.run_id
    await drain(call)
    await asyncio.wait_for(running.host.runs.wait_finished(queued), 10)
    rows = (await storage.list_messages(MessageQuery("t1"))).messages
    assert [m.role for m in rows] == ["user", "assistant", "signal", "assistant"]
    assert from_db_message(rows[2]).contents == "my next question"


async def test_another_agents_run_targeted_by_id_is_thread_busy(running: Running) -> None:
    call, run_id = await start_slow_run(running, "chat")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await running.signals.SendMessage(
            sspb.SendMessageRequest(
                agent_id="other",
                target=spb.SignalTarget(run_id=run_id, resource_id="u1", thread_id="t1"),
                message=spb.MessageInput(text="into your run"),
            )
        )
    err = rich_error(info.value)
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "THREAD_BUSY")
    await drain(call)


@pytest.mark.parametrize("kind", ["system", "custom", "github-review"])
async def test_only_the_four_categories_are_signal_types(running: Running, kind: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await running.signals.SendSignal(
            sspb.SendSignalRequest(agent_id="chat", target=T, signal=spb.SignalInput(type=kind, text="x"))
        )
    err = rich_error(info.value)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_SIGNAL_TYPE")
    assert "tag_name" in err.violations["signal.type"]  # a custom tag is what tag_name is for


async def test_a_custom_tag_rides_on_a_category(running: Running, model_calls: list[list[str]]) -> None:
    reply = await running.signals.SendSignal(
        sspb.SendSignalRequest(
            agent_id="chat",
            target=T,
            signal=spb.SignalInput(type="notification", tag_name="github-review", text="approved"),
        )
    )
    await asyncio.wait_for(running.host.runs.wait_finished(reply.decision.wake.run_id), 10)
    assert model_calls[-1][-1] == "<github-review>approved</github-review>"
