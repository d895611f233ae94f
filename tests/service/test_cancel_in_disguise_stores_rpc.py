"""A cancelled run stays cancelled, and a stopped server's loops stop,
however a store they wait on takes the cancellation: storage, overrides or
notifications that are cancelled and raise an error of their own instead (a
client library that wraps the cancellation) do not make a run go on without
its caller, or a loop go on after the server stopped. Two tests hold that an
aborted run's ending still logs its own failures and sends its abort."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

import grpc
import pytest

from agentd.runtime import Agent, ExecutionOptions, Tool
from agentd.runtime.chunks import Abort
from agentd.runtime.memory import Memory
from agentd.runtime.messages import Message
from agentd.runtime.notifications.record import NotificationRecord
from agentd.runtime.notifications.store import InMemoryNotificationStore
from agentd.runtime.overrides import InMemoryOverrideStore, OverrideVersion
from agentd.runtime.processors.base import (
    ProcessInputArgs,
    Processor,
)
from agentd.runtime.storage import BackgroundTask, InMemoryStorage, PendingSignal, StorageError
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support import notifications
from support.clocks import T0
from support.disguise import Disguise
from support.polling import until
from support.runs import script
from support.server import ended, in_flight, serving, start_server
from support.wire import drain


class DisguisedStorage(InMemoryStorage):
    """In-memory storage whose record of background work waits once and,
    cancelled there, fails as a storage error."""

    def __init__(self, disguise: Disguise) -> None:
        super().__init__()
        self.disguise = disguise

    async def save_background_task(self, task: BackgroundTask) -> None:
        await self.disguise.wait()
        await super().save_background_task(task)


async def test_an_aborted_runs_background_record_that_fails_on_the_cancel_runs_no_further_tool() -> None:
    disguise = Disguise(StorageError("connection reset"))
    storage = DisguisedStorage(disguise)
    ran: list[str] = []
    agent = Agent(
        id="deferring",
        model="local/scripted",
        memory=Memory(storage),
        tools=[
            Tool("report", "Writes a report", lambda args: ran.append("report"), background=True),
            Tool("next", "Runs after it", lambda args: ran.append("next")),
        ],
        default_options=script(
            {"toolCalls": [{"id": "c1", "name": "report", "args": {}}, {"id": "c2", "name": "next", "args": {}}]},
            {"text": "all done"},
        ),
    )
    memory = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t1"))
    async with serving([agent], storage=storage) as running:
        stream = running.agents.Stream(apb.StreamRequest(agent_id="deferring", text="go", options=memory))
        await asyncio.wait_for(disguise.waiting.wait(), 10)
        handle = await in_flight(running)
        assert (
            await running.threads.AbortRun(tpb.AbortRunRequest(thread_id="t1", resource_id="u1", run_id=handle.run_id))
        ).aborted
        result = await ended(running, handle)
        stream.cancel()
    assert result.aborted == Abort("ABORTED", "aborted by request")
    assert ran == []  # the second call of the step never ran after the abort


class FailingSaves(InMemoryStorage):
    """In-memory storage whose message saves fail, on their own, once told to."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = False

    async def save_messages(self, messages: list[Message]) -> None:
        if self.failing:
            raise StorageError("disk full")
        await super().save_messages(messages)


async def test_an_aborted_run_whose_partial_output_cannot_be_saved_still_ends_with_its_abort() -> None:
    # The ending of an aborted run still holds its cancellation: a failure
    # there is its own, so the abort still goes out (nothing more is lost).
    storage = FailingSaves()
    slow = {"local": {"delayMs": 30, "script": [{"deltas": [f"w{i} " for i in range(200)]}]}}
    agent = Agent(
        id="saves",
        model="local/scripted",
        memory=Memory(storage),
        default_options=ExecutionOptions(provider_options=slow),
    )
    options = opb.ExecutionOptions(
        memory=opb.MemoryOptions(resource="u1", thread_id="t1"), persist_partial_on_abort=True
    )
    async with serving([agent], storage=storage) as running:
        call = running.agents.Stream(apb.StreamRequest(agent_id="saves", text="go", options=options))
        chunks: list[cpb.Chunk] = []
        while not any(c.WhichOneof("payload") == "text_delta" for c in chunks):
            message = await call.read()
            assert message is not grpc.aio.EOF
            chunks.extend(message.chunks)
        handle = await in_flight(running)
        storage.failing = True
        assert (await running.threads.AbortRun(tpb.AbortRunRequest(thread_id="t1", resource_id="u1"))).aborted
        chunks.extend(await drain(call))
        result = await ended(running, handle)
    assert result.aborted == Abort("ABORTED", "aborted by request")
    assert chunks[-1].WhichOneof("payload") == "abort"


class DisguisedOverrides(InMemoryOverrideStore):
    """In-memory overrides whose reads, once told to, wait and, cancelled there,
    fail as a storage error."""

    def __init__(self, disguise: Disguise) -> None:
        super().__init__()
        self.disguise = disguise
        self.failing = False

    async def head(self, key: str) -> OverrideVersion | None:
        if self.failing:
            await self.disguise.wait()
        return await super().head(key)


class Records(Processor):
    id = "records"

    def __init__(self) -> None:
        self.runs: list[str] = []

    def process_input(self, args: ProcessInputArgs) -> None:
        self.runs.append(args.run_id)


async def test_a_generate_cancelled_while_its_agents_overrides_are_read_starts_no_run() -> None:
    # (Storage that failed on the cancel let the run start on the version read
    # before, and go to its end without its caller.)
    disguise, records = Disguise(StorageError("connection reset")), Records()
    store = DisguisedOverrides(disguise)
    running = await start_server(
        [Agent(id="edited", input_processors=[records])], override_store=store, overrides_cache_ttl=0
    )
    try:
        await running.agents.Generate(apb.GenerateRequest(agent_id="edited", text="one"))  # the version is read
        store.failing = True
        call = running.agents.Generate(apb.GenerateRequest(agent_id="edited", text="two"))
        await asyncio.wait_for(disguise.waiting.wait(), 10)
        call.cancel()
        await asyncio.wait_for(disguise.raised.wait(), 10)
    finally:
        await running.close()  # lets any run started finish
    assert len(records.runs) == 1


class DisguisedNotifications(InMemoryNotificationStore):
    """In-memory notifications whose listing of what is due, once told to,
    waits and, cancelled there, fails as a storage error."""

    def __init__(self, disguise: Disguise) -> None:
        super().__init__()
        self.disguise = disguise
        self.failing = False

    async def list_due(self, now: datetime, **filters: Any) -> list[NotificationRecord]:
        if self.failing:
            await self.disguise.wait()
        return await super().list_due(now, **filters)


def dispatchers() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if t.get_name() == "notification dispatcher" and not t.done()]


async def test_the_notification_dispatcher_stops_with_the_server_though_its_store_turns_the_cancel_into_error() -> None:
    # (It logged the error and went on dispatching, every interval, after the server stopped.)
    disguise = Disguise(StorageError("connection reset"))
    store = DisguisedNotifications(disguise)
    running = await start_server([Agent(id="quiet")], notification_store=store, dispatch_interval=0.01)
    try:
        store.failing = True
        await asyncio.wait_for(disguise.waiting.wait(), 10)  # a dispatch pass waits on the store
    finally:
        await running.close()
    assert disguise.raised.is_set()
    await until(dispatchers, holds=lambda left: not left, what="the dispatcher to stop")


class PendingDisguised(InMemoryStorage):
    """In-memory storage whose outbox write waits once and, cancelled there,
    fails as a storage error."""

    def __init__(self, disguise: Disguise) -> None:
        super().__init__()
        self.disguise = disguise

    async def save_pending(self, entry: PendingSignal) -> None:
        await self.disguise.wait()
        await super().save_pending(entry)


@pytest.mark.parametrize("due", ["deliver_at", "summary_at"], ids=["delivery", "summary"])
async def test_the_dispatcher_stops_with_the_server_though_a_delivery_turns_the_cancel_into_an_error(due: str) -> None:
    # (The delivery counted as a failed attempt, and the dispatcher went on after the server stopped.)
    disguise = Disguise()
    storage, store = PendingDisguised(disguise), InMemoryNotificationStore()
    record = await notifications.create(store, agent_id="notified")
    await notifications.schedule(store, record, **{due: T0})
    agent = Agent(id="notified", memory=Memory(storage))
    running = await start_server([agent], storage=storage, notification_store=store, dispatch_interval=0.01)
    try:
        await asyncio.wait_for(disguise.waiting.wait(), 10)  # its delivery waits
    finally:
        await running.close()
    assert disguise.raised.is_set()
    await until(dispatchers, holds=lambda left: not left, what="the dispatcher to stop")
    kept = await store.get(record.thread_id, record.id)
    assert kept is not None and (kept.status, kept.delivery_attempts) == ("pending", 0)  # for the next start
