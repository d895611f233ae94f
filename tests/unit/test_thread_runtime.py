"""ThreadRuntime on one process (LocalThreadLog, LocalOwnership): what an
answer promises when storage fails, and what the runtime keeps per thread."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from agentd.runtime import Agent, AgentRegistry, ExecutionOptions
from agentd.runtime.errors import Unavailable
from agentd.runtime.host import Host
from agentd.runtime.memory import Memory
from agentd.runtime.signals import create_message_signal
from agentd.runtime.storage import InMemoryStorage, PendingSignal, StorageError
from agentd.runtime.threads import RouteRequest

SLOW = ExecutionOptions(provider_options={"local": {"delayMs": 20}})


class FlakyStorage(InMemoryStorage):
    """In-memory storage whose outbox writes fail while `down` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    async def save_pending(self, entry: PendingSignal) -> None:
        if self.down:
            raise StorageError("connection refused")
        await super().save_pending(entry)

    async def delete_pending(self, signal_ids: Sequence[str]) -> None:
        if self.down:
            raise StorageError("connection refused")
        await super().delete_pending(signal_ids)


@pytest.fixture
async def host() -> AsyncIterator[Host]:
    storage = FlakyStorage()
    made = Host(agents=AgentRegistry([Agent(id="chat", memory=Memory(storage))]), storage=storage)
    await made.open()
    try:
        yield made
    finally:
        await made.drain(0)
        await made.close()


def message(text: str, **fields: object) -> RouteRequest:
    return RouteRequest(
        agent_id="chat",
        signal=create_message_signal(text),
        resource_id="u1",
        thread_id="t1",
        stream_options=SLOW,
        **fields,  # type: ignore[arg-type]
    )


def storage_of(host: Host) -> FlakyStorage:
    assert isinstance(host.storage, FlakyStorage)
    return host.storage


async def test_a_wake_whose_outbox_write_fails_is_unavailable_and_starts_no_run(host: Host) -> None:
    storage_of(host).down = True
    with pytest.raises(Unavailable) as failed:
        await host.threads.route(message("lost?"))
    assert failed.value.reason == "STORAGE_UNAVAILABLE" and failed.value.retry_after
    assert host.runs.active() == [] and host.threads.active_run("u1", "t1") is None
    storage_of(host).down = False
    # Storage is back: the retry (same signal) is routed afresh and runs.
    routing = await host.threads.route(message("again"))
    assert routing.action == "wake" and routing.run_id
    assert [e.signal.text for e in await host.storage.list_pending()] == ["again"]


async def test_a_delivery_whose_outbox_write_fails_never_reaches_the_run(host: Host) -> None:
    first = await host.threads.route(message("w " * 40))
    assert first.action == "wake" and first.run_id
    handle = host.runs.get(first.run_id)
    assert handle is not None
    storage_of(host).down = True
    for request in (message("delivered?"), message("queued?", queue=True)):
        with pytest.raises(Unavailable) as failed:
            await host.threads.route(request)
        assert failed.value.reason == "STORAGE_UNAVAILABLE"
    storage_of(host).down = False
    await handle.result()
    await host.threads.settled(first.run_id)
    assert "delivered?" not in str(handle.pending_signals)
    assert host.threads.active_run("u1", "t1") is None  # no queued run followed
    assert await host.storage.list_pending() == []


async def test_a_retried_request_on_one_process_is_routed_once(host: Host) -> None:
    """Two copies of one request at once (a client retrying on a timeout): one
    wake, and the copy gets the same answer instead of a second delivery."""
    request = message("once")
    one, two = await asyncio.gather(host.threads.route(request), host.threads.route(request))
    assert one == two and one.action == "wake"
