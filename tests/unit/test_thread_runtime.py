"""ThreadRuntime on one process (LocalThreadLog, LocalOwnership): what an
answer promises when storage fails, and what the runtime keeps per thread."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace

import pytest

from agentd.runtime import Agent, AgentRegistry, ExecutionOptions
from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.errors import NotFound, OutOfRange, Unavailable
from agentd.runtime.host import Host
from agentd.runtime.memory import Memory
from agentd.runtime.signals import create_message_signal
from agentd.runtime.storage import InMemoryStorage, PendingSignal, StorageError, Thread
from agentd.runtime.threads import LocalThreadLog, RouteRequest, ThreadSettings

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


# ------------------------------------------------------------ what is kept per thread


def chunk(run_id: str, seq: int, text: str = "x") -> Chunk:
    return Chunk(TextDelta("t", text), run_id, seq)


async def test_a_subscription_to_an_unknown_thread_keeps_nothing_once_it_ends(host: Host) -> None:
    for i in range(2_000):
        _, replay, subscriber = await host.threads.subscribe("u1", f"nobody-{i}")
        assert replay == []
        host.threads.unsubscribe("u1", f"nobody-{i}", subscriber)
    assert isinstance(host.threads.log, LocalThreadLog)
    assert len(host.threads.log) == 0 and len(host.threads) == 0


async def test_a_finished_run_leaves_no_thread_state_behind(host: Host) -> None:
    for i in range(20):
        routing = await host.threads.route(replace(message(f"turn {i}"), thread_id=f"t-{i}"))
        assert routing.run_id
        await host.runs.wait_finished(routing.run_id)
        await host.threads.settled(routing.run_id)
    assert len(host.threads) == 0  # the logs stay (bounded), the live state does not


async def test_logs_are_bounded_by_count_and_a_dropped_log_cannot_be_resumed() -> None:
    log = LocalThreadLog(ThreadSettings(log_retention=100, subscriber_buffer=10, log_max_threads=10))
    epochs = {}
    for i in range(25):
        await log.append(f"t{i}", [chunk("r", 1), chunk("r", 2)])
        joined = await log.join(f"t{i}", resume_epoch=None, after_offset=None)
        epochs[f"t{i}"] = joined.epoch
        log.leave(f"t{i}", joined.subscriber)
    assert len(log) == 10
    with pytest.raises(OutOfRange) as expired:
        await log.join("t0", resume_epoch=epochs["t0"], after_offset=0)
    assert expired.value.reason == "RESUME_OFFSET_EXPIRED"
    kept = await log.join("t24", resume_epoch=epochs["t24"], after_offset=0)
    assert [c.seq for c in kept.replay] == [1, 2]


async def test_logs_are_bounded_by_bytes_even_when_watched() -> None:
    log = LocalThreadLog(ThreadSettings(subscriber_buffer=10_000, log_max_bytes=200_000))
    watched = await log.join("w", resume_epoch=None, after_offset=None)
    for i in range(50):
        await log.append(f"t{i}", [chunk("r", 1, "y" * 10_000)])
        await log.append("w", [chunk("w", i + 1, "z" * 10_000)])
    assert log.bytes <= 200_000
    assert "w" in log._logs  # the watched log stays, trimmed
    with pytest.raises(OutOfRange):
        await log.join("w", resume_epoch=watched.epoch, after_offset=0)  # its first chunks are gone


async def test_an_idle_log_nobody_watches_expires() -> None:
    now = [0.0]
    log = LocalThreadLog(ThreadSettings(log_retention=100, subscriber_buffer=10, log_idle_ttl=60), clock=lambda: now[0])
    await log.append("old", [chunk("r", 1)])
    watched = await log.join("kept", resume_epoch=None, after_offset=None)
    await log.append("kept", [chunk("r", 1)])
    now[0] = 61
    await log.append("new", [chunk("r", 1)])
    assert set(log._logs) == {"kept", "new"}
    log.leave("kept", watched.subscriber)


async def test_deleting_a_thread_deletes_its_log_and_pending_signals(host: Host) -> None:
    await host.storage.save_thread(Thread("t1", "u1"))
    first = await host.threads.route(message("w " * 40))
    assert first.run_id
    snapshot, _, subscriber = await host.threads.subscribe("u1", "t1")
    queued = await host.threads.route(message("later", queue=True))
    assert queued.action == "deliver"
    assert await host.threads.delete_thread("u1", "t1")
    assert host.threads.active_run("u1", "t1") is None
    assert await host.storage.list_pending() == []
    assert await host.storage.get_thread("t1") is None
    with pytest.raises(OutOfRange):
        await host.threads.subscribe("u1", "t1", resume_epoch=snapshot.log_epoch, after_offset=0)
    host.threads.unsubscribe("u1", "t1", subscriber)


async def test_a_request_is_checked_against_its_tenant_wherever_it_is_routed(host: Host) -> None:
    """The ids a request carries are its tenant's (scoped by the transport); a
    replica asked to route it (or this process) checks again: a request whose
    ids name another tenant's thread finds nothing."""
    forged = replace(message("across"), thread_id="acme\x1ft1", resource_id="acme\x1fu1", tenant="globex")
    for route in (host.threads.route, host.threads.answer_peer):
        with pytest.raises(NotFound):
            await route(forged)
    mine = replace(forged, tenant="acme")
    assert (await host.threads.route(mine)).action == "wake"
