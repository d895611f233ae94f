"""Signals, routing and thread subscriptions over a real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage, MessageQuery
from agentd.runtime.threads import ThreadSettings
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.polling import until
from support.server import Running, start_server
from support.wire import drain

T = spb.SignalTarget(resource_id="u1", thread_id="t1")


def slow(delay_ms: int = 40) -> opb.ExecutionOptions:
    options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t1"))
    options.provider_options.update({"local": {"delayMs": delay_ms}})
    return options


def attrs(**values: Any) -> list[mpb.Attribute]:
    out = []
    for name, value in values.items():
        v = struct_pb2.Value()
        if isinstance(value, str):
            v.string_value = value
        else:
            v.number_value = value
        out.append(mpb.Attribute(name=name, value=v))
    return out


async def start_slow_run(running: Running, words: int = 30) -> Any:
    call = running.agents.Stream(apb.StreamRequest(agent_id="chat", text=" ".join(["w"] * words), options=slow()))
    first = await call.read()
    return call, first.chunks[0].run_id


async def send(running: Running, text: str = "hi", **kwargs: Any) -> sspb.SendMessageResponse:
    return await running.signals.SendMessage(
        sspb.SendMessageRequest(agent_id="chat", target=T, message=spb.MessageInput(text=text), **kwargs)
    )


async def test_idle_wake_starts_a_run_with_the_message(
    running: Running, storage: InMemoryStorage, model_calls: list[list[str]]
) -> None:
    reply = await send(running, "wake up")
    assert reply.decision.WhichOneof("action") == "wake" and reply.decision.wake.run_id
    await running.host.runs.wait_finished(reply.decision.wake.run_id)
    assert model_calls[-1][-1] == "wake up"
    stored = (await storage.list_messages(MessageQuery("t1"))).messages
    assert [m.role for m in stored] == ["signal", "assistant"]


@pytest.mark.parametrize(
    ("behavior", "action"),
    [(spb.IDLE_BEHAVIOR_PERSIST, "persist"), (spb.IDLE_BEHAVIOR_DISCARD, "discard")],
)
async def test_idle_persist_and_discard(
    running: Running, storage: InMemoryStorage, model_calls: list[list[str]], behavior: int, action: str
) -> None:
    reply = await send(running, "note", if_idle=spb.IfIdle(behavior=behavior))
    assert reply.decision.WhichOneof("action") == action
    assert model_calls == []
    stored = (await storage.list_messages(MessageQuery("t1"))).messages if await storage.get_thread("t1") else []
    assert len(stored) == (1 if action == "persist" else 0)


async def test_active_deliver_joins_the_running_run(running: Running, model_calls: list[list[str]]) -> None:
    call, run_id = await start_slow_run(running)
    reply = await send(running, "also this")
    assert (reply.decision.WhichOneof("action"), reply.decision.deliver.run_id) == ("deliver", run_id)
    chunks = await drain(call)
    echoes = [c.signal.signal for c in chunks if c.HasField("signal")]
    assert [e.text for e in echoes] == ["also this"]
    assert len(model_calls) == 2 and model_calls[1][-1] == "also this"  # the run called the model again


@pytest.mark.parametrize(
    ("behavior", "action"),
    [(spb.ACTIVE_BEHAVIOR_PERSIST, "persist"), (spb.ACTIVE_BEHAVIOR_DISCARD, "discard")],
)
async def test_active_persist_and_discard(
    running: Running, storage: InMemoryStorage, model_calls: list[list[str]], behavior: int, action: str
) -> None:
    call, _ = await start_slow_run(running)
    reply = await send(running, "side note", if_active=spb.IfActive(behavior=behavior))
    assert reply.decision.WhichOneof("action") == action
    await drain(call)
    assert len(model_calls) == 1  # the active run never saw it
    stored = [m.role for m in (await storage.list_messages(MessageQuery("t1"))).messages]
    assert stored.count("signal") == (1 if action == "persist" else 0)


async def test_the_xml_the_model_sees(running: Running, model_calls: list[list[str]]) -> None:
    reply = await running.signals.SendMessage(
        sspb.SendMessageRequest(
            agent_id="chat",
            target=T,
            message=spb.MessageInput(
                text="Can we simplify the API surface?", attributes=attrs(name="Devin", **{"from": "slack"})
            ),
        )
    )
    await running.host.runs.wait_finished(reply.decision.wake.run_id)
    assert model_calls[-1][-1] == '<user name="Devin" from="slack">Can we simplify the API surface?</user>'
    reply = await running.signals.SendMessage(
        sspb.SendMessageRequest(
            agent_id="chat",
            target=T,
            message=spb.MessageInput(text="Also cover the edge cases.", attributes=attrs(source="chat")),
            if_active=spb.IfActive(attributes=attrs(delivery="while-active")),
            if_idle=spb.IfIdle(attributes=attrs(delivery="new-message")),
        )
    )
    await running.host.runs.wait_finished(reply.decision.wake.run_id)
    assert model_calls[-1][-1] == '<user source="chat" delivery="new-message">Also cover the edge cases.</user>'
    call, _ = await start_slow_run(running)
    await running.signals.SendMessage(
        sspb.SendMessageRequest(
            agent_id="chat",
            target=T,
            message=spb.MessageInput(text="Also cover the edge cases.", attributes=attrs(source="chat")),
            if_active=spb.IfActive(attributes=attrs(delivery="while-active")),
            if_idle=spb.IfIdle(attributes=attrs(delivery="new-message")),
        )
    )
    await drain(call)
    assert model_calls[-1][-1] == '<user source="chat" delivery="while-active">Also cover the edge cases.</user>'
    reply = await running.signals.SendSignal(
        sspb.SendSignalRequest(
            agent_id="chat",
            target=T,
            signal=spb.SignalInput(
                type="notification",
                tag_name="github-review",
                text='a & b <c> "d"',
                attributes=attrs(pr=123, title='x"y<z'),
            ),
        )
    )
    await running.host.runs.wait_finished(reply.decision.wake.run_id)
    assert (
        model_calls[-1][-1] == '<github-review pr="123" title="x&quot;y&lt;z">a &amp; b &lt;c&gt; "d"</github-review>'
    )


async def test_unknown_signal_type_is_invalid_argument(running: Running) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await running.signals.SendSignal(
            sspb.SendSignalRequest(agent_id="chat", target=T, signal=spb.SignalInput(type="banana", text="x"))
        )
    err = rich_error(info.value)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_SIGNAL_TYPE")
    assert "signal.type" in err.violations


async def test_queue_runs_three_messages_in_order(running: Running, model_calls: list[list[str]]) -> None:
    call, run_id = await start_slow_run(running, words=10)
    queued = [
        await running.signals.QueueMessage(
            sspb.QueueMessageRequest(agent_id="chat", target=T, message=spb.MessageInput(text=f"queued {i}"))
        )
        for i in range(3)
    ]
    ids = [q.decision.deliver.run_id for q in queued]
    assert len(set(ids)) == 3 and run_id not in ids
    await drain(call)
    for queued_id in ids:
        await asyncio.wait_for(running.host.runs.wait_finished(queued_id), 10)
    assert [p[-1] for p in model_calls[1:]] == ["queued 0", "queued 1", "queued 2"]


async def test_two_senders_racing_on_an_idle_thread_make_one_run(
    running: Running, model_calls: list[list[str]]
) -> None:
    paced = opb.ExecutionOptions()
    paced.provider_options.update({"local": {"delayMs": 50}})  # the woken run is still going when B lands
    idle = spb.IfIdle(stream_options=paced)
    a, b = await asyncio.gather(send(running, "from A", if_idle=idle), send(running, "from B", if_idle=idle))
    actions = sorted((a.decision.WhichOneof("action"), b.decision.WhichOneof("action")))
    assert actions == ["deliver", "wake"]
    run_ids = {a.decision.wake.run_id or a.decision.deliver.run_id, b.decision.wake.run_id or b.decision.deliver.run_id}
    assert len(run_ids) == 1
    await running.host.runs.wait_finished(run_ids.pop())
    model_input = [text for prompt in model_calls for text in prompt]
    assert "from A" in model_input and "from B" in model_input


async def subscribe(running: Running, **kwargs: Any) -> Any:
    return running.threads.Subscribe(tpb.SubscribeRequest(thread_id="t1", resource_id="u1", **kwargs))


async def test_a_wake_run_outlives_its_caller_and_a_late_subscriber_replays_it(running: Running) -> None:
    reply = await send(running, "run without me")
    await running.host.runs.wait_finished(reply.decision.wake.run_id)  # the caller is long gone
    first = await (await subscribe(running)).read()
    snapshot = first.snapshot
    assert snapshot.active_run_id == "" and snapshot.last_offset > 0
    stream = await subscribe(running, resume=tpb.ResumePoint(log_epoch=snapshot.log_epoch, after_offset=0))
    await stream.read()  # snapshot
    batch = (await stream.read()).chunks.chunks
    assert batch[0].HasField("start") and batch[1].signal.signal.text == "run without me"
    assert batch[-1].HasField("finish") and batch[-1].offset == snapshot.last_offset
    stream.cancel()


async def test_resume_after_offset_has_no_gap_and_no_duplicate(running: Running) -> None:
    stream = await subscribe(running)
    snapshot = (await stream.read()).snapshot
    reply = await send(running, "one two three four")
    seen = []
    while not (seen and seen[-1].HasField("finish")):
        seen.extend((await stream.read()).chunks.chunks)
    stream.cancel()
    offsets = [c.offset for c in seen]
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    assert all(c.run_id == reply.decision.wake.run_id for c in seen)
    n = offsets[3]
    resumed = await subscribe(running, resume=tpb.ResumePoint(log_epoch=snapshot.log_epoch, after_offset=n))
    await resumed.read()
    replayed = (await resumed.read()).chunks.chunks
    assert [c.offset for c in replayed] == offsets[4:]
    resumed.cancel()
    expired = await subscribe(running, resume=tpb.ResumePoint(log_epoch="another-epoch", after_offset=n))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await expired.read()
    assert (info.value.code(), rich_error(info.value).reason) == (grpc.StatusCode.OUT_OF_RANGE, "RESUME_OFFSET_EXPIRED")


async def test_abort_run_stops_the_active_run(running: Running) -> None:
    call, run_id = await start_slow_run(running, words=200)
    aborted = await running.threads.AbortRun(tpb.AbortRunRequest(thread_id="t1"))
    assert (aborted.aborted, aborted.run_id) == (True, run_id)
    chunks = await drain(call)
    assert chunks[-1].abort.reason == "ABORTED"
    again = await running.threads.AbortRun(tpb.AbortRunRequest(thread_id="t1"))
    assert not again.aborted


async def test_a_state_signal_is_skipped_when_unchanged(running: Running, storage: InMemoryStorage) -> None:
    await running.threads.CreateThread(tpb.CreateThreadRequest(thread=tpb.Thread(id="t1", resource_id="u1")))

    async def state(cache_key: str) -> sspb.SendStateSignalResponse:
        return await running.signals.SendStateSignal(
            sspb.SendStateSignalRequest(
                agent_id="chat",
                target=T,
                if_idle=spb.IfIdle(behavior=spb.IDLE_BEHAVIOR_PERSIST),
                state=spb.StateSignalInput(id="browser", cache_key=cache_key, text="Browser open at example.com"),
            )
        )

    first = await state("browser:a")
    assert (first.decision.WhichOneof("action"), first.version) == ("persist", 1)
    again = await state("browser:a")
    assert (again.decision.WhichOneof("action"), again.version) == ("skipped_unchanged", 1)
    changed = await state("browser:b")
    assert (changed.decision.WhichOneof("action"), changed.version) == ("persist", 2)
    rows = (await storage.list_messages(MessageQuery("t1"))).messages
    assert len(rows) == 2


async def test_a_transient_signal_reaches_the_model_but_not_history(
    running: Running, storage: InMemoryStorage, model_calls: list[list[str]]
) -> None:
    call, _ = await start_slow_run(running)
    reply = await running.signals.SendSignal(
        sspb.SendSignalRequest(
            agent_id="chat", target=T, signal=spb.SignalInput(type="reactive", text="just this once", transient=True)
        )
    )
    assert reply.decision.WhichOneof("action") == "deliver"
    await drain(call)
    assert "<system-reminder>just this once</system-reminder>" in model_calls[-1]
    everything = (await storage.list_messages(MessageQuery("t1", include_system_reminders=True))).messages
    assert not any("just this once" in (m.parts[0].signal.text if m.role == "signal" else "") for m in everything)
    persisted = await running.signals.SendSignal(
        sspb.SendSignalRequest(
            agent_id="chat",
            target=T,
            signal=spb.SignalInput(type="reactive", text="never", transient=True),
            if_idle=spb.IfIdle(behavior=spb.IDLE_BEHAVIOR_PERSIST),
        )
    )
    assert persisted.decision.WhichOneof("action") == "persist"  # answered persist, nothing written


async def test_a_retried_send_with_the_same_id_is_not_routed_twice(
    running: Running, model_calls: list[list[str]]
) -> None:
    first = await running.signals.SendMessage(
        sspb.SendMessageRequest(agent_id="chat", target=T, message=spb.MessageInput(id="msg-1", text="once"))
    )
    again = await running.signals.SendMessage(
        sspb.SendMessageRequest(agent_id="chat", target=T, message=spb.MessageInput(id="msg-1", text="once"))
    )
    assert again.decision == first.decision
    await running.host.runs.wait_finished(first.decision.wake.run_id)
    assert len(model_calls) == 1


async def read_to_finish(running: Running, epoch: str, after: int, got: list[Any]) -> int:
    """Reads a thread until a finish chunk, resuming after every fell-behind marker;
    returns how many markers it met."""
    markers = 0
    stream = await subscribe(running, resume=tpb.ResumePoint(log_epoch=epoch, after_offset=after))
    await stream.read()  # snapshot
    while not (got and got[-1].HasField("finish")):
        message = await stream.read()
        if message is grpc.aio.EOF:
            raise AssertionError("the stream ended without a fell-behind marker")
        if message.HasField("fell_behind"):
            markers += 1
            assert await stream.code() == grpc.StatusCode.OK
            stream = await subscribe(
                running, resume=tpb.ResumePoint(log_epoch=epoch, after_offset=message.fell_behind.last_offset)
            )
            await stream.read()
            continue
        got.extend(message.chunks.chunks)
    stream.cancel()
    return markers


async def test_a_slow_subscriber_falls_behind_without_slowing_the_run() -> None:
    storage = InMemoryStorage()
    running = await start_server(
        [Agent(id="chat", memory=Memory(storage))],
        storage=storage,
        thread_settings=ThreadSettings(subscriber_buffer=16),
    )
    try:
        slow_reader = await subscribe(running)  # A: subscribed, reads nothing while the run goes
        snapshot = (await slow_reader.read()).snapshot
        fast: list[Any] = []
        reader_b = asyncio.create_task(read_to_finish(running, snapshot.log_epoch, snapshot.last_offset, fast))
        text = " ".join(["x" * 99] * 5000)  # 5000 deltas of 100 bytes: past the buffer and the transport window
        reply = await send(running, text)
        await asyncio.wait_for(running.host.runs.wait_finished(reply.decision.wake.run_id), 60)  # A never blocked it
        await asyncio.wait_for(reader_b, 60)  # B sees the finish
        got, marker = [], None
        while (message := await slow_reader.read()) is not grpc.aio.EOF:
            if message.HasField("fell_behind"):
                marker = message.fell_behind
            else:
                got.extend(message.chunks.chunks)
        assert marker is not None and await slow_reader.code() == grpc.StatusCode.OK
        assert marker.last_offset == (got[-1].offset if got else snapshot.last_offset)
        await read_to_finish(running, marker.log_epoch, marker.last_offset, got)  # A resumes by offset
        assert [c.offset for c in got] == [c.offset for c in fast]  # no gap, no duplicate
        assert len(got) == 5007  # start, the echo, step start, text start and end, 5000 deltas, step finish, finish
    finally:
        await running.close()


async def test_open_thread_streams_end_with_server_shutdown() -> None:
    running = await start_server([Agent(id="chat")])
    try:
        subscription = running.threads.Subscribe(tpb.SubscribeRequest(thread_id="t1", resource_id="u1"))
        assert (await subscription.read()).HasField("snapshot")

        async def frames() -> AsyncIterator[tpb.ConnectRequest]:
            yield tpb.ConnectRequest(
                request_id="o", open=tpb.ConnectOpen(agent_id="chat", resource_id="u1", thread_id="t1")
            )
            await asyncio.sleep(30)

        connection = running.threads.Connect(frames())
        assert (await connection.read()).HasField("snapshot")
        await running.server.stop(grace=0)
        for call in (subscription, connection):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                while await call.read() is not grpc.aio.EOF:
                    pass
            err = rich_error(info.value)
            assert (err.code, err.reason) == (grpc.StatusCode.UNAVAILABLE, "SERVER_SHUTDOWN")
    finally:
        await running.channel.close()


async def test_an_acknowledged_delivery_is_recovered_after_the_process_stops(model_calls: list[list[str]]) -> None:
    """A deliver answer is sent after the signal is in the outbox; a process that
    stops before the run ends leaves it there, and the next process replays it
    into a new run (exactly once: the outbox is cleared when that run ends)."""
    from agentd.runtime.host import Host
    from agentd.runtime.registry import AgentRegistry

    storage = InMemoryStorage()
    running = await start_server([Agent(id="chat", memory=Memory(storage))], storage=storage)
    try:
        call, run_id = await start_slow_run(running, words=400)
        reply = await send(running, "do not lose me")
        assert reply.decision.deliver.run_id == run_id
        assert [e.signal.text for e in await storage.list_pending()] == ["do not lose me"]
        # A second process on the same storage, as after a crash of the first.
        restarted = Host(agents=AgentRegistry([Agent(id="chat", memory=Memory(storage))]), storage=storage)
        assert await restarted.threads.open() == 1
        recovered = restarted.threads.active_run("u1", "t1")
        assert recovered is not None and recovered.run_id != run_id
        await recovered.result()
        await until(  # the outbox is cleared as the run's log closes
            storage.list_pending, holds=lambda pending: pending == [], what="the outbox cleared"
        )
        assert any("do not lose me" in p for p in model_calls[-1])
        call.cancel()
    finally:
        await running.close()


async def test_the_outbox_empties_when_the_taking_run_ends(
    running: Running, storage: InMemoryStorage, model_calls: list[list[str]]
) -> None:
    call, _ = await start_slow_run(running)
    await send(running, "taken")
    assert len(await storage.list_pending()) == 1
    await drain(call)
    await until(storage.list_pending, holds=lambda pending: pending == [], what="the outbox emptied")
    assert model_calls[-1][-1] == "taken"
