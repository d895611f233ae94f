"""What a routed signal records, over gRPC: when it was accepted (on the
wire and in its stored row), and where its row sits in the thread."""

from __future__ import annotations

from datetime import UTC, datetime

from agentd.runtime.signals import from_db_message
from agentd.runtime.storage import InMemoryStorage, MessageQuery
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.server import Running
from support.wire import drain

TARGET = spb.SignalTarget(resource_id="u1", thread_id="t1")


async def send(running: Running, text: str) -> sspb.SendMessageResponse:
    return await running.signals.SendMessage(
        sspb.SendMessageRequest(agent_id="chat", target=TARGET, message=spb.MessageInput(text=text))
    )


async def stored_rows(running: Running) -> list[mpb.Message]:
    listed = await running.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1", resource_id="u1"))
    return list(listed.messages)


async def test_an_accepted_signal_carries_its_accept_time_on_the_wire_and_in_its_row(
    running: Running, storage: InMemoryStorage
) -> None:
    before = datetime.now(UTC)
    reply = await send(running, "wake up")
    after = datetime.now(UTC)

    assert reply.signal.HasField("accept_time")
    accepted = reply.signal.accept_time.ToDatetime(tzinfo=UTC)
    assert before <= accepted <= after
    await running.host.runs.wait_finished(reply.decision.wake.run_id)
    row = next(m for m in await stored_rows(running) if m.role == mpb.ROLE_SIGNAL)
    assert row.parts[0].signal.signal.accept_time == reply.signal.accept_time
    stored = next(m for m in (await storage.list_messages(MessageQuery("t1"))).messages if m.role == "signal")
    assert from_db_message(stored).accepted_at == accepted


async def test_a_signal_delivered_into_a_running_run_is_stored_after_the_reply_it_interrupted(
    running: Running, storage: InMemoryStorage
) -> None:
    options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t1"))
    options.provider_options.update({"local": {"delayMs": 40}})
    call = running.agents.Stream(apb.StreamRequest(agent_id="chat", text=" ".join(["word"] * 50), options=options))
    await call.read()  # the run started: it streams for two seconds
    reply = await send(running, "and one more thing")
    assert reply.decision.WhichOneof("action") == "deliver"
    chunks = await drain(call)
    echo = next(c.signal.signal for c in chunks if c.HasField("signal"))
    assert echo.HasField("accept_time") and echo.accept_time == reply.signal.accept_time

    rows = await stored_rows(running)
    assert [m.role for m in rows] == [mpb.ROLE_USER, mpb.ROLE_ASSISTANT, mpb.ROLE_SIGNAL, mpb.ROLE_ASSISTANT]
    assert rows[3].parts[0].text.text == "and one more thing"  # local/echo answers the signal
    stored = (await storage.list_messages(MessageQuery("t1"))).messages
    assert [m.role for m in stored] == ["user", "assistant", "signal", "assistant"]
    assert [m.created_at for m in stored] == sorted(m.created_at for m in stored)
