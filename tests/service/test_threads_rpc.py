"""ThreadService and memory-bound runs over a real server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import field_mask_pb2, struct_pb2, timestamp_pb2

from agentd.grpc import paging
from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.processors.base import Processor, ProcessOutputResultArgs
from agentd.runtime.signals import create_signal, to_db_message
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.processors import HeldAfterRun
from support.server import Running, serving
from support.wire import drain


class Guard(Processor):
    id = "guard"

    def process_output_result(self, args: ProcessOutputResultArgs) -> None:
        if "forbidden" in args.result.text:
            args.abort("blocked")


@pytest.fixture
async def chat() -> AsyncIterator[tuple[Running, InMemoryStorage]]:
    storage = InMemoryStorage()
    agents = [Agent(id="chat", memory=Memory(storage), output_processors=[Guard()]), Agent(id="echo")]
    async with serving(agents, storage=storage) as running:
        yield running, storage


def memory(resource: str = "u1", thread: str = "t1", **thread_object: Any) -> opb.ExecutionOptions:
    if thread_object:
        obj = opb.ThreadInput(id=thread, title=thread_object.get("title", ""))
        if "metadata" in thread_object:
            obj.metadata.update(thread_object["metadata"])
        return opb.ExecutionOptions(memory=opb.MemoryOptions(resource=resource, thread_object=obj))
    return opb.ExecutionOptions(memory=opb.MemoryOptions(resource=resource, thread_id=thread))


async def messages(running: Running, thread: str = "t1", **kwargs: Any) -> list[Any]:
    return list((await running.threads.ListMessages(tpb.ListMessagesRequest(thread_id=thread, **kwargs))).messages)


async def test_history_carries_into_the_next_call_over_rpc(chat: Any) -> None:
    running, _ = chat
    await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="first", options=memory()))
    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="second", options=memory()))
    assert (reply.thread_id, reply.resource_id) == ("t1", "u1")
    listed = await messages(running)
    assert [(m.role, m.parts[0].text.text) for m in listed] == [
        (1, "first"),
        (2, "first"),
        (1, "second"),
        (2, "second"),
    ]
    newest_first = await messages(running, order=tpb.SORT_ORDER_DESCENDING, page_size=1)
    assert newest_first[0].parts[0].text.text == "second" and newest_first[0].role == 2


async def test_thread_object_creates_then_updates_metadata(chat: Any) -> None:
    running, _ = chat
    await running.agents.Generate(
        apb.GenerateRequest(
            agent_id="chat", text="x", options=memory(title="Billing", metadata={"category": "billing"})
        )
    )
    got = (await running.threads.GetThread(tpb.GetThreadRequest(thread_id="t1"))).thread
    assert (got.title, got.metadata["category"], got.resource_id) == ("Billing", "billing", "u1")
    await running.agents.Generate(
        apb.GenerateRequest(agent_id="chat", text="y", options=memory(title="Other", metadata={"category": "refunds"}))
    )
    got = (await running.threads.GetThread(tpb.GetThreadRequest(thread_id="t1"))).thread
    assert (got.title, got.metadata["category"]) == ("Billing", "refunds")


async def test_an_output_abort_saves_nothing_over_rpc(chat: Any) -> None:
    running, _ = chat
    await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="fine", options=memory()))
    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="forbidden", options=memory()))
    assert reply.tripwire.processor_id == "guard"
    assert [m.parts[0].text.text for m in await messages(running)] == ["fine", "fine"]


async def test_a_thread_needs_its_resource(chat: Any) -> None:
    running, _ = chat
    options = opb.ExecutionOptions(memory=opb.MemoryOptions(thread_id="t1"))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="x", options=options))
    err = rich_error(info.value)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MEMORY_IDS_REQUIRED")


async def test_thread_crud(chat: Any) -> None:
    running, _ = chat
    threads = running.threads
    meta = struct_pb2.Struct()
    meta.update({"team": "a"})
    created = (
        await threads.CreateThread(
            tpb.CreateThreadRequest(thread=tpb.Thread(id="c1", resource_id="r1", title="One", metadata=meta))
        )
    ).thread
    assert (created.id, created.title, created.metadata["team"]) == ("c1", "One", "a")
    generated = (await threads.CreateThread(tpb.CreateThreadRequest(thread=tpb.Thread(resource_id="r1")))).thread
    assert generated.id and generated.id != "c1"
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await threads.CreateThread(tpb.CreateThreadRequest(thread=tpb.Thread(id="c1", resource_id="r1")))
    assert (info.value.code(), rich_error(info.value).reason) == (
        grpc.StatusCode.ALREADY_EXISTS,
        "THREAD_ALREADY_EXISTS",
    )
    renamed = (
        await threads.UpdateThread(
            tpb.UpdateThreadRequest(
                thread=tpb.Thread(id="c1", title="Renamed", metadata=struct_pb2.Struct()),
                update_mask=field_mask_pb2.FieldMask(paths=["title"]),
            )
        )
    ).thread
    assert (renamed.title, renamed.metadata["team"]) == ("Renamed", "a")  # metadata untouched by the mask
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await threads.UpdateThread(
            tpb.UpdateThreadRequest(
                thread=tpb.Thread(id="c1"), update_mask=field_mask_pb2.FieldMask(paths=["resource_id"])
            )
        )
    assert "update_mask.paths[0]" in rich_error(info.value).violations
    with pytest.raises(grpc.aio.AioRpcError) as info:  # another resource learns nothing
        await threads.GetThread(tpb.GetThreadRequest(thread_id="c1", resource_id="r2"))
    assert rich_error(info.value).reason == "THREAD_NOT_FOUND"
    await threads.DeleteThread(tpb.DeleteThreadRequest(thread_id="c1"))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await threads.GetThread(tpb.GetThreadRequest(thread_id="c1"))
    assert (info.value.code(), rich_error(info.value).reason) == (grpc.StatusCode.NOT_FOUND, "THREAD_NOT_FOUND")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await threads.DeleteThread(tpb.DeleteThreadRequest(thread_id="c1"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


async def test_list_threads_paginates_per_aip_158(chat: Any) -> None:
    running, _ = chat
    for i in range(5):
        meta = struct_pb2.Struct()
        meta.update({"even": i % 2 == 0})
        await running.threads.CreateThread(
            tpb.CreateThreadRequest(thread=tpb.Thread(id=f"p{i}", resource_id="pages", metadata=meta))
        )
    await running.threads.CreateThread(tpb.CreateThreadRequest(thread=tpb.Thread(id="other", resource_id="else")))
    seen, token = [], ""
    while True:
        page = await running.threads.ListThreads(
            tpb.ListThreadsRequest(resource_id="pages", page_size=2, page_token=token)
        )
        seen += [t.id for t in page.threads]
        token = page.next_page_token
        if not token:
            break
    assert seen == ["p4", "p3", "p2", "p1", "p0"]  # newest first, each once
    wanted = struct_pb2.Struct()
    wanted.update({"even": True})
    filtered = await running.threads.ListThreads(tpb.ListThreadsRequest(resource_id="pages", metadata_filter=wanted))
    assert [t.id for t in filtered.threads] == ["p4", "p2", "p0"]
    with pytest.raises(grpc.aio.AioRpcError) as info:  # a token of another resource's list
        await running.threads.ListThreads(
            tpb.ListThreadsRequest(resource_id="else", page_token=paging.encode("threads:pages", "x|y"))
        )
    assert "page_token" in rich_error(info.value).violations


async def test_list_messages_pages_and_hides_reminders_unless_asked(chat: Any) -> None:
    running, storage = chat
    await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="hello", options=memory()))
    await storage.save_messages(
        [
            to_db_message(create_signal("reactive", "be brief"), "t1", "u1"),
            to_db_message(create_signal("user", "from slack", attributes={"name": "Devin"}), "t1", "u1"),
        ]
    )
    default = await messages(running)
    assert [m.role for m in default] == [1, 2, 4]  # the user signal row is listed, the reminder is not
    assert default[2].parts[0].signal.signal.attributes[0].name == "name"
    everything = await messages(running, include_system_reminders=True)
    assert [m.role for m in everything] == [1, 2, 4, 4]
    seen, token = [], ""
    while True:
        page = await running.threads.ListMessages(
            tpb.ListMessagesRequest(thread_id="t1", page_size=1, page_token=token, include_system_reminders=True)
        )
        seen += [m.id for m in page.messages]
        token = page.next_page_token
        if not token:
            break
    assert seen == [m.id for m in everything]
    other_filters = paging.encode("messages:t1:asc:True", "2026-01-01T00:00:00+00:00|1")
    with pytest.raises(grpc.aio.AioRpcError) as info:  # the token is bound to its filters
        await running.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1", page_token=other_filters))
    assert "page_token" in rich_error(info.value).violations


@pytest.mark.parametrize(
    ("call", "fields"),
    [
        (lambda t: t.CreateThread(tpb.CreateThreadRequest()), {"thread.resource_id"}),
        (lambda t: t.GetThread(tpb.GetThreadRequest()), {"thread_id"}),
        (lambda t: t.ListThreads(tpb.ListThreadsRequest(page_size=-1)), {"resource_id", "page_size"}),
        (lambda t: t.UpdateThread(tpb.UpdateThreadRequest()), {"thread.id"}),
        (lambda t: t.DeleteThread(tpb.DeleteThreadRequest()), {"thread_id"}),
        (lambda t: t.ListMessages(tpb.ListMessagesRequest()), {"thread_id"}),
        (
            lambda t: t.ListMessages(
                tpb.ListMessagesRequest(thread_id="t1", end_time=timestamp_pb2.Timestamp(nanos=-1))
            ),
            {"end_time"},
        ),
    ],
)
async def test_thread_rpcs_name_bad_fields(chat: Any, call: Any, fields: set[str]) -> None:
    running, _ = chat
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call(running.threads)
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and set(err.violations) == fields


class SlowDelete(InMemoryStorage):
    """Storage whose thread deletion waits until released."""

    def __init__(self) -> None:
        super().__init__()
        self.deleting, self.release = asyncio.Event(), asyncio.Event()

    async def delete_thread(self, thread_id: str) -> bool:
        self.deleting.set()
        await self.release.wait()
        return await super().delete_thread(thread_id)


async def test_a_delete_whose_caller_leaves_still_deletes_the_whole_thread() -> None:
    # Its pending signals go first: a delete cut short after them, the thread
    # kept, would have lost acknowledged signals and deleted nothing.
    storage = SlowDelete()
    async with serving([Agent(id="chat", memory=Memory(storage))], storage=storage) as running:
        await running.threads.CreateThread(tpb.CreateThreadRequest(thread=tpb.Thread(id="c1", resource_id="r1")))
        call = asyncio.ensure_future(running.threads.DeleteThread(tpb.DeleteThreadRequest(thread_id="c1")))
        await asyncio.wait_for(storage.deleting.wait(), 10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        storage.release.set()
        for _ in range(200):
            if await storage.get_thread("c1") is None:
                break
            await asyncio.sleep(0.01)
        assert await storage.get_thread("c1") is None


async def test_a_thread_deleted_while_its_runs_work_for_after_it_runs_cuts_that_short() -> None:
    # The run has its result: AbortRun has nothing to abort and says so, but a
    # delete leaves nothing of the thread's run going.
    storage = InMemoryStorage()
    never = HeldAfterRun()
    async with serving(
        [Agent(id="chat", memory=Memory(storage), input_processors=[never])], storage=storage
    ) as running:
        call = running.agents.Stream(apb.StreamRequest(agent_id="chat", text="hello", options=memory(thread="d1")))
        reading = asyncio.ensure_future(drain(call))
        await never.began()
        refused = await running.threads.AbortRun(tpb.AbortRunRequest(thread_id="d1", resource_id="u1"))
        assert (refused.aborted, refused.run_id) == (False, "")
        await asyncio.wait_for(running.threads.DeleteThread(tpb.DeleteThreadRequest(thread_id="d1")), 10)
        chunks = await asyncio.wait_for(reading, 10)
        assert chunks[-1].WhichOneof("payload") == "finish"
        assert await storage.get_thread("d1") is None
        assert never.finished == []


async def test_a_runs_work_for_after_it_that_never_ends_frees_its_thread_at_its_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # An on_finish callback that never returns held the thread's run, and the
    # thread, for ever: no abort reaches a run that has its result.
    # ([server] on_finish_timeout_seconds, 60 s by default.)
    storage = InMemoryStorage()
    never = HeldAfterRun()
    async with serving(
        [Agent(id="chat", memory=Memory(storage), input_processors=[never])], storage=storage
    ) as running:
        running.host.runs.on_finish_timeout = 0.2
        first = await asyncio.wait_for(
            running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="hello", options=memory(thread="h1"))),
            10,
        )
        second = await asyncio.wait_for(
            running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="again", options=memory(thread="h1"))),
            10,
        )
        assert (first.text, second.text) == ("hello", "again")
        assert never.entered == [first.run_id, second.run_id] and never.finished == []
        assert [m.role for m in await messages(running, thread="h1")] == [
            mpb.ROLE_USER,
            mpb.ROLE_ASSISTANT,
            mpb.ROLE_USER,
            mpb.ROLE_ASSISTANT,
        ]
    skipped = [r.getMessage() for r in caplog.records if "on_finish_timeout_seconds" in r.getMessage()]
    assert len(skipped) == 2 and f"run {first.run_id} took longer than 0.2 s" in skipped[0]
