"""Acknowledged signals under storage failures at exact points, in process
(the Redis restart test meets these at random): a run that cannot save what it
took is run again once storage answers, without a restart; a signal a run saved
but could not clear from the outbox is never run twice; a run that fails in
set-up after its start went out ends in the stream too, and its refused
signal is neither kept nor replayed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage, StorageError
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.polling import until
from support.server import Running, start_server

from .harness import decision, is_storage_unavailable, kind

pytestmark = pytest.mark.timeout(30)


class FlakyStorage(InMemoryStorage):
    """In-memory storage whose named operations fail the next `failures[name]` times."""

    def __init__(self) -> None:
        super().__init__()
        self.failures: dict[str, int] = {}

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        failures = object.__getattribute__(self, "failures")
        if failures.get(name, 0) > 0:

            async def refused(*args: Any, **kwargs: Any) -> Any:
                failures[name] -= 1
                raise StorageError(f"{name}: connection refused")

            return refused
        return value


async def serve(storage: FlakyStorage) -> Running:
    return await start_server([Agent(id="chat", memory=Memory(storage, last_messages=20))], storage=storage)


@pytest.fixture
async def flaky() -> AsyncIterator[tuple[Running, FlakyStorage]]:
    storage = FlakyStorage()
    running = await serve(storage)
    try:
        yield running, storage
    finally:
        await running.channel.close()
        await running.server.stop(0)


async def watching(running: Running, thread_id: str = "t1") -> Watch:
    watch = Watch(running, thread_id)
    await asyncio.wait_for(watch.joined.wait(), 5)
    return watch


class Watch:
    def __init__(self, running: Running, thread_id: str) -> None:
        self.chunks: list[cpb.Chunk] = []
        self.joined = asyncio.Event()
        self.call = running.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id=thread_id))
        self.task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for response in self.call:
            self.joined.set()
            if response.HasField("chunks"):
                self.chunks.extend(response.chunks.chunks)

    def ends(self) -> list[tuple[str, str]]:
        return [(kind(c), c.error.reason) for c in self.chunks if kind(c) in ("finish", "error", "abort")]

    async def close(self) -> None:
        self.call.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def send(running: Running, message_id: str, text: str) -> sspb.SendMessageResponse:
    reply: sspb.SendMessageResponse = await running.signals.SendMessage(
        sspb.SendMessageRequest(
            agent_id="chat",
            target=spb.SignalTarget(resource_id="u1", thread_id="t1"),
            message=spb.MessageInput(id=message_id, text=text),
        )
    )
    return reply


async def replies(storage: InMemoryStorage) -> list[str]:
    return [m.text for m in await storage.last_messages("t1", 100) if m.role == "assistant"]


async def test_a_run_that_cannot_save_what_it_took_runs_again_once_storage_answers(
    flaky: tuple[Running, FlakyStorage],
) -> None:
    running, storage = flaky
    watch = await watching(running)
    try:
        await send(running, "m0", "first")  # the thread exists, with history
        await until(lambda: watch.ends() == [("finish", "")], within=5, what="the first run")
        storage.failures.update(save_messages=1, delete_pending=1)  # the run's save, then the outbox's clear
        action, run_id = decision(await send(running, "m1", "acknowledged"))
        assert action == "wake"
        await until(lambda: len(watch.ends()) == 3, within=10, what="the failed run and its replay")
        assert watch.ends()[1] == ("error", "STORAGE_UNAVAILABLE")
        assert watch.ends()[2] == ("finish", "")
        replay = {c.run_id for c in watch.chunks if kind(c) == "signal" and c.signal.signal.id == "m1"} - {run_id}
        assert len(replay) == 1  # run again, once, with no restart
        await until(lambda: len(running.host.threads.recovery) == 0, within=5, what="recovery done")
        assert await replies(storage) == ["first", "acknowledged"]
        assert await storage.list_pending() == []
    finally:
        await watch.close()


async def test_a_signal_saved_but_left_in_the_outbox_is_not_run_again_after_a_restart() -> None:
    storage = FlakyStorage()
    first = await serve(storage)
    watch = await watching(first)
    try:
        storage.failures.update(delete_pending=1)  # the run saves, then cannot clear the outbox
        await send(first, "m1", "once")
        await until(lambda: watch.ends() == [("finish", "")], within=5, what="the run")
        await until(lambda: storage.failures["delete_pending"] == 0, within=5, what="the failed clear")
    finally:
        await watch.close()
        await first.channel.close()
        await first.server.stop(0)  # the recovery stops with the server: the entry is left
    assert [p.signal.id for p in await storage.list_pending()] == ["m1"]

    second = await serve(storage)  # replays what the first left
    try:
        await until(lambda: len(second.host.threads) == 0, within=5, what="the thread idle")
        assert await replies(storage) == ["once"]
        assert await storage.list_pending() == []
    finally:
        await second.channel.close()
        await second.server.stop(0)


async def test_a_wake_whose_run_fails_in_set_up_ends_in_the_stream_and_is_not_kept(
    flaky: tuple[Running, FlakyStorage],
) -> None:
    running, storage = flaky
    watch = await watching(running)
    try:
        await send(running, "m0", "first")
        await until(lambda: watch.ends() == [("finish", "")], within=5, what="the first run")
        storage.failures.update(list_messages=1)  # reading the history, after the run's start went out
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await send(running, "m1", "refused")
        assert is_storage_unavailable(rich_error(refused.value))
        await until(lambda: len(watch.ends()) == 2, within=5, what="the failed run's end")
        assert watch.ends()[1] == ("error", "STORAGE_UNAVAILABLE")
        await until(lambda: len(running.host.threads.recovery) == 0, within=5, what="recovery done")
        await asyncio.sleep(0.3)  # a replay would have started by now
        assert await storage.list_pending() == []
        assert await replies(storage) == ["first"]
        assert len(watch.ends()) == 2
    finally:
        await watch.close()
