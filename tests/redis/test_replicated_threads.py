"""Threads under leases (LeasedOwnership, SharedThreadLog) in one process: two or three Hosts, each a replica with its
own RedisCoordination, RedisCluster and RedisStorage on one real redis-server.
The three-process tests are in tests/e2e/test_replicas.py; these reach the
cases a test can only provoke from inside (a stolen lease, a handover, a
shutdown with queued work, trimming)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from redis.asyncio import Redis

from agentd.backends.redis_cluster import RedisCluster
from agentd.backends.redis_coordination import RedisCoordination
from agentd.backends.redis_storage import RedisStorage
from agentd.runtime import Agent, AgentRegistry, ExecutionOptions, codec, register_provider
from agentd.runtime.chunks import Chunk
from agentd.runtime.errors import FailedPrecondition, OutOfRange
from agentd.runtime.host import Host
from agentd.runtime.options import MemoryOptions, ThreadRef
from agentd.runtime.signals import create_message_signal
from agentd.runtime.storage import PendingSignal
from agentd.runtime.threads import LeasedOwnership, RouteRequest, Subscriber, ThreadSettings, follow
from agentd.runtime.threads.peers import AbortAnswer, AbortForward
from redis_server import RedisServer
from support.polling import until
from support.processors import HeldAfterRun
from support_models import HELD, held_model

TTL_MS = 600


class RecordingCoordination(RedisCoordination):
    """Leases on Redis, with every transfer and release written down."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[str, ...]] = []

    async def transfer(self, thread_id: str, owner: str, new_owner: str, ttl_ms: int) -> bool:
        self.calls.append(("transfer", owner, new_owner))
        return await super().transfer(thread_id, owner, new_owner, ttl_ms)

    async def release(self, thread_id: str, owner: str) -> bool:
        self.calls.append(("release", owner))
        return await super().release(thread_id, owner)


class SlowOutbox(RedisStorage):
    """Redis storage whose outbox writes are acknowledged `delay` seconds after they land."""

    def __init__(self, *args: Any, delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.delay = delay

    async def save_pending(self, entry: PendingSignal) -> None:
        await super().save_pending(entry)
        await asyncio.sleep(self.delay)


def agents(release: Path) -> list[Agent]:
    register_provider(HELD, held_model)
    held = {
        "local": {"script": [{"deltas": ["good ", "morning"]}]},
        HELD: {"afterDeltas": 1, "releaseFile": str(release)},
    }
    return [
        Agent(id="held", model="held/scripted", default_options=ExecutionOptions(provider_options=held)),
        Agent(id="echo", model="local/echo"),
        Agent(id="after", model="local/echo", input_processors=[HeldAfterRun()]),
    ]


@pytest.fixture
async def replicas(redis_server: RedisServer, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    prefix = f"rt-{uuid.uuid4().hex[:8]}:"
    made: list[Host] = []

    async def make(
        *, log_retention: int = 10_000, sweep_interval: float | None = None, commit_delay: float = 0.0
    ) -> Host:
        url = redis_server.url
        host = Host(
            agents=AgentRegistry(agents(tmp_path / "release")),
            storage=SlowOutbox(url, key_prefix=f"{prefix}store:", delay=commit_delay),
            coordination=RecordingCoordination(url, key_prefix=f"{prefix}lease:"),
            cluster=RedisCluster(url, key_prefix=f"{prefix}cluster:", log_retention=log_retention),
            thread_settings=ThreadSettings(
                lease_ttl_ms=TTL_MS, log_retention=log_retention, sweep_interval=sweep_interval
            ),
        )
        await host.storage.open()
        await host.threads.open()
        made.append(host)
        return host

    try:
        yield make
    finally:
        for host in made:
            await host.runs.shutdown(0)
            await host.threads.shutdown()
            await host.coordination.close()
            assert host.cluster is not None
            await host.cluster.close()
            await host.storage.close()


def thread_options(thread_id: str) -> ExecutionOptions:
    return ExecutionOptions(memory=MemoryOptions("u1", ThreadRef(thread_id)))


async def wake(host: Host, thread_id: str, text: str = "hello", agent: str = "held") -> str:
    routing = await host.threads.route(
        RouteRequest(agent_id=agent, signal=create_message_signal(text), resource_id="u1", thread_id=thread_id)
    )
    assert routing.action == "wake" and routing.run_id
    return routing.run_id


async def collect(subscriber: Subscriber, into: list[Chunk]) -> None:
    async for batch in follow(subscriber):
        into.extend(batch)


def counted(reader: InMemoryMetricReader, name: str) -> float:
    data = reader.get_metrics_data()
    points = [
        p
        for r in (data.resource_metrics if data else [])
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == name
        for p in m.data.data_points
    ]
    return sum(p.value for p in points)  # type: ignore[attr-defined]


def threads_of(host: Host) -> LeasedOwnership:
    assert isinstance(host.threads.ownership, LeasedOwnership)
    return host.threads.ownership


async def test_a_run_whose_lease_is_taken_away_is_aborted_with_lease_lost(replicas: Callable[..., Any]) -> None:
    a = await replicas()
    run_id = await wake(a, "t1")
    handle = a.runs.get(run_id)
    assert handle is not None
    owner = await a.coordination.owner("t1")
    assert owner == f"{threads_of(a).replica_id}/{run_id}"
    assert await a.coordination.transfer("t1", owner, "someone-else/r9", 60_000)  # stolen
    result = await asyncio.wait_for(handle.result(), 5)
    assert result.aborted is not None and result.aborted.reason == "LEASE_LOST"
    assert await a.coordination.owner("t1") == "someone-else/r9"  # the loser never touches it again


async def test_a_thread_deleted_on_another_replica_cuts_its_ended_runs_work_for_after_it_short(
    replicas: Callable[..., Any],
) -> None:
    # The run on a has its result: an abort from b has nothing to abort, but
    # b's delete, forwarded to a, leaves nothing of that run going.
    a, b = await replicas(), await replicas()
    run_id = await wake(a, "t1", agent="after")
    handle = a.runs.get(run_id)
    assert handle is not None
    held = a.agents.get("after").input_processors[0]
    assert isinstance(held, HeldAfterRun)
    await held.began()
    assert await b.threads.abort("u1", "t1") is None
    assert not handle.done
    await asyncio.wait_for(b.threads.delete_thread("u1", "t1"), 5)
    result = await asyncio.wait_for(handle.result(), 5)
    assert (result.text, result.aborted) == ("hello", None)
    assert held.entered == [run_id] and held.finished == []


async def test_a_request_from_a_newer_replica_is_answered_as_the_request_this_one_knows(
    replicas: Callable[..., Any], redis_server: RedisServer
) -> None:
    # During a rolling upgrade a newer replica may send a field this version does not
    # know (as AbortForward's `stop` once was): the request is answered, not dropped.
    a = await replicas()
    run_id = await wake(a, "t1")
    handle = a.runs.get(run_id)
    assert handle is not None
    cluster = a.cluster
    assert isinstance(cluster, RedisCluster)
    body = json.loads(codec.encode(AbortForward("u1", "t1", run_id)))
    body["added_by_a_newer_version"] = True
    envelope = {"id": "newer-1", "from": "newer", "body": body}
    client = Redis.from_url(redis_server.url)
    pubsub = client.pubsub()
    try:
        await pubsub.subscribe(cluster.key("replica", "newer"))
        assert await client.publish(cluster.key("replica", cluster.replica_id), json.dumps(envelope)) == 1

        async def answer() -> Any:
            while True:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is not None:
                    return codec.decode(message["data"])

        reply = await asyncio.wait_for(answer(), 5)
    finally:
        await pubsub.aclose()  # type: ignore[no-untyped-call]
        await client.aclose()
    assert reply == {"re": "newer-1", "body": AbortAnswer(run_id)}
    result = await asyncio.wait_for(handle.result(), 5)
    assert result.aborted is not None and result.aborted.reason == "ABORTED"


async def test_a_run_that_ends_with_queued_work_hands_its_lease_to_the_next_run(
    replicas: Callable[..., Any], tmp_path: Path
) -> None:
    a = await replicas()
    first = await wake(a, "t1")
    queued = await a.threads.route(
        RouteRequest(
            agent_id="held", signal=create_message_signal("next"), resource_id="u1", thread_id="t1", queue=True
        )
    )
    assert queued.action == "deliver" and queued.run_id != first
    (tmp_path / "release").touch()
    assert queued.run_id is not None
    await asyncio.wait_for(a.runs.wait_finished(queued.run_id), 5)  # it ran
    replica = threads_of(a).replica_id
    calls = a.coordination.calls  # type: ignore[attr-defined]
    assert ("transfer", f"{replica}/{first}", f"{replica}/{queued.run_id}") in calls
    assert ("release", f"{replica}/{first}") not in calls  # handed on, not released
    await until(lambda: ("release", f"{replica}/{queued.run_id}") in calls, what="the queued run's lease released")
    assert await a.coordination.owner("t1") is None


async def test_a_thread_bound_run_on_another_replica_is_thread_busy_with_that_run_id(
    replicas: Callable[..., Any],
) -> None:
    a, b = await replicas(), await replicas()
    run_id = await wake(a, "t1")
    with pytest.raises(FailedPrecondition) as busy:
        await b.threads.start_run(b.agents.get("echo"), "hi", thread_options("t1"))
    assert busy.value.reason == "THREAD_BUSY" and busy.value.metadata["run_id"] == run_id
    assert await b.threads.active_run_id("u1", "t1") == run_id
    assert await b.threads.thread_of_run(run_id) == ("u1", "t1")


async def test_work_queued_on_a_replica_that_shuts_down_runs_on_another(
    replicas: Callable[..., Any], tmp_path: Path
) -> None:
    a, b = await replicas(), await replicas()
    metered = InMemoryMetricReader()
    b.enable_metrics(MeterProvider(metric_readers=[metered]))
    _, _, subscriber = await b.threads.subscribe("u1", "t1")
    seen: list[Chunk] = []
    reader = asyncio.ensure_future(collect(subscriber, seen))
    try:
        first = await wake(a, "t1")
        queued = await b.threads.route(  # through B, held by A
            RouteRequest(
                agent_id="held", signal=create_message_signal("later"), resource_id="u1", thread_id="t1", queue=True
            )
        )
        assert queued.action == "deliver"
        await a.runs.shutdown(0)  # A's run is aborted: SERVER_SHUTDOWN; the queued run cannot start there
        await a.threads.shutdown()
        (tmp_path / "release").touch()

        def echoes() -> list[Chunk]:
            return [c for c in seen if c.type == "signal" and c.payload.signal.text == "later"]  # type: ignore[union-attr]

        await until(
            lambda: echoes() and any(c.type == "finish" and c.run_id == echoes()[0].run_id for c in seen),
            what="the replayed run to finish on B",
        )
        assert [c.payload.reason for c in seen if c.run_id == first and c.type == "abort"] == ["SERVER_SHUTDOWN"]  # type: ignore[union-attr]
        replayed = echoes()[0].run_id
        assert b.runs.get(replayed) is None and replayed != first
        assert len(echoes()) == 1  # once
        assert await b.storage.list_pending() == []
        assert counted(metered, "agentd.lease.takeovers") >= 1  # B took the thread A left
    finally:
        b.threads.unsubscribe("u1", "t1", subscriber)
        reader.cancel()


async def test_a_signal_persisted_on_an_idle_thread_reaches_subscribers_on_other_replicas(
    replicas: Callable[..., Any],
) -> None:
    a, b = await replicas(), await replicas()
    _, _, subscriber = await b.threads.subscribe("u1", "t1")
    seen: list[Chunk] = []
    reader = asyncio.ensure_future(collect(subscriber, seen))
    try:
        routing = await a.threads.route(
            RouteRequest(
                agent_id="echo",
                signal=create_message_signal("note"),
                resource_id="u1",
                thread_id="t1",
                if_idle="persist",
            )
        )
        assert routing.action == "persist"
        await until(
            lambda: [c.type for c in seen],
            holds=lambda types: types == ["start", "signal", "finish"],
            what="the persisted signal's chunks",
        )
        assert seen[1].payload.signal.text == "note"  # type: ignore[union-attr]
    finally:
        b.threads.unsubscribe("u1", "t1", subscriber)
        reader.cancel()


async def test_a_resume_from_a_foreign_epoch_or_a_trimmed_offset_is_out_of_range(
    replicas: Callable[..., Any], tmp_path: Path
) -> None:
    a = await replicas(log_retention=5)
    (tmp_path / "release").touch()
    for i in range(4):
        await wake(a, "t1", f"message {i} " + "word " * 60, agent="echo")
        await until(  # every chunk logged (the lease goes last)
            lambda: a.coordination.owner("t1"), holds=lambda owner: owner is None, what="the lease released"
        )
    snapshot, _, subscriber = await a.threads.subscribe("u1", "t1")
    a.threads.unsubscribe("u1", "t1", subscriber)
    with pytest.raises(OutOfRange) as foreign:
        await a.threads.subscribe("u1", "t1", resume_epoch="not-this-one", after_offset=snapshot.last_offset)
    assert foreign.value.reason == "RESUME_OFFSET_EXPIRED"
    with pytest.raises(OutOfRange) as trimmed:
        await a.threads.subscribe("u1", "t1", resume_epoch=snapshot.log_epoch, after_offset=1)
    assert int(trimmed.value.metadata["dropped_until"]) > 1
    _, replay, subscriber = await a.threads.subscribe(
        "u1", "t1", resume_epoch=snapshot.log_epoch, after_offset=snapshot.last_offset - 2
    )
    a.threads.unsubscribe("u1", "t1", subscriber)
    assert [c.offset for c in replay] == [snapshot.last_offset - 1, snapshot.last_offset]


async def test_two_subscribers_joining_while_a_run_streams_see_every_chunk_once(
    replicas: Callable[..., Any], tmp_path: Path
) -> None:
    a, b = await replicas(), await replicas()
    seen: dict[str, list[Chunk]] = {"early": [], "late": []}
    _, _, early = await b.threads.subscribe("u1", "t1")
    readers = [asyncio.ensure_future(collect(early, seen["early"]))]
    late: Subscriber | None = None
    try:
        run_id = await wake(a, "t1")  # holds after its first delta
        await until(lambda: any(c.type == "text-delta" for c in seen["early"]), what="the first delta")
        snapshot, replay, late = await b.threads.subscribe("u1", "t1")  # mid-run, on the same feed
        assert snapshot.active_run_id == run_id and replay == []
        seen["late"].extend(replay)
        readers.append(asyncio.ensure_future(collect(late, seen["late"])))
        (tmp_path / "release").touch()
        await until(
            lambda: all(any(c.type == "finish" for c in chunks) for chunks in seen.values()),
            what="both to see the finish",
        )
        early_offsets = [c.offset for c in seen["early"]]
        late_offsets = [c.offset for c in seen["late"]]
        assert {c.run_id for c in seen["early"]} == {run_id}
        assert early_offsets == sorted(set(early_offsets))  # in order, no duplicate
        assert late_offsets == [o for o in early_offsets if o > snapshot.last_offset]  # no gap, no duplicate
        assert late_offsets  # it did join mid-run
    finally:
        b.threads.unsubscribe("u1", "t1", early)
        if late is not None:
            b.threads.unsubscribe("u1", "t1", late)
        for reader in readers:
            reader.cancel()


async def test_a_wake_holds_the_thread_before_its_signal_is_pending(
    replicas: Callable[..., Any], tmp_path: Path
) -> None:
    """A sweeping replica takes over threads whose lease is free and which have
    signals pending: a wake's signal must never be pending on a free thread, or
    the sweep replays it while the wake is still being routed."""
    a = await replicas(commit_delay=0.3)
    b = await replicas(sweep_interval=0.02)
    routing = await a.threads.route(
        RouteRequest(agent_id="held", signal=create_message_signal("once"), resource_id="u1", thread_id="t1")
    )
    assert routing.action == "wake" and routing.run_id
    assert a.runs.get(routing.run_id) is not None and b.runs.active() == []
    (tmp_path / "release").touch()
    await asyncio.wait_for(a.runs.wait_finished(routing.run_id), 5)
    await a.threads.settled(routing.run_id)
    assert b.runs.active() == [] and await a.storage.list_pending() == []


async def test_a_run_waits_out_a_sweeps_claim_instead_of_answering_thread_busy(
    replicas: Callable[..., Any],
) -> None:
    """A sweep that finds a thread just gone idle holds it for a moment (a claim
    naming no run); a Generate arriving then must start its run once the claim
    is let go, not answer THREAD_BUSY for a thread nobody runs."""
    a, b = await replicas(), await replicas()
    claim = f"{threads_of(b).replica_id}/~claim-test"
    assert await b.coordination.acquire("t1", claim, 60_000)

    async def let_go() -> None:
        await asyncio.sleep(0.2)
        assert await b.coordination.release("t1", claim)

    releasing = asyncio.ensure_future(let_go())
    handle = await a.threads.start_run(a.agents.get("echo"), "hi", thread_options("t1"))
    await releasing
    assert (await handle.result()).text == "hi"
    # A claim that does not go away within a lease's lifetime is THREAD_BUSY.
    assert await b.coordination.acquire("t2", claim, 60_000)
    with pytest.raises(FailedPrecondition) as busy:
        await a.threads.start_run(a.agents.get("echo"), "hi", thread_options("t2"))
    assert busy.value.reason == "THREAD_BUSY" and busy.value.metadata["run_id"] == ""
