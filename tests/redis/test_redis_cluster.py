"""RedisCluster (agentd.backends.redis_cluster) on a real redis-server: chunk
logs (offsets, tails, epochs, trimming, expiry), following logs with
read_new / interrupt_read, run markers, requests between replicas over
pub/sub, and a server that is not there.

Every test uses its own key prefix (replicas of one test share it). Timing:
TTLs and waits are a few hundred milliseconds; nothing waits out a long block.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import pytest

from agentd.backends.redis_cluster import RedisCluster
from agentd.runtime import codec
from agentd.runtime.chunks import Abort, Chunk, Finish, Start, TextDelta, Usage
from agentd.runtime.cluster import PENDING, ClusterError, PeerGone, PeerTimeout, RunMarker
from agentd.runtime.errors import FailedPrecondition, FieldViolation, InvalidArgument, Unavailable
from agentd.runtime.signals import create_signal
from agentd.runtime.threads.shared_log import SharedThreadLog
from redis_server import RedisServer, free_port
from support.polling import until

Make = Callable[..., RedisCluster]


def thread() -> str:
    return f"thread-{uuid.uuid4().hex[:8]}"


def delta(seq: int, run_id: str = "run-1") -> Chunk:
    return Chunk(TextDelta("text-1", f"token {seq}"), run_id, seq)


def run_chunks(run_id: str = "run-1", deltas: int = 3) -> list[Chunk]:
    """A whole run: start, some text, finish."""
    chunks = [Chunk(Start("support", "t", "user-1"), run_id, 1)]
    chunks += [Chunk(TextDelta("text-1", f"token {i}"), run_id, i + 2) for i in range(deltas)]
    usage = Usage(input_tokens=3, output_tokens=deltas, total_tokens=3 + deltas)
    chunks.append(Chunk(Finish("stop", usage, usage), run_id, deltas + 2))
    return chunks


def with_offsets(chunks: list[Chunk], offsets: list[int]) -> list[Chunk]:
    return [replace(c, offset=o) for c, o in zip(chunks, offsets, strict=True)]


@pytest.fixture
async def make(redis_server: RedisServer) -> AsyncIterator[Make]:
    """Makes RedisClusters on one server and one fresh key prefix (replicas); closes them all."""
    prefix = f"t-{uuid.uuid4().hex}:"
    made: list[RedisCluster] = []

    def make_cluster(**kwargs: Any) -> RedisCluster:
        kwargs.setdefault("key_prefix", prefix)
        made.append(RedisCluster(redis_server.url, **kwargs))
        return made[-1]

    try:
        yield make_cluster
    finally:
        try:
            if made:
                client = made[0].client
                keys = [k async for k in client.scan_iter(match=prefix + "*")]
                if keys:
                    await client.delete(*keys)
        finally:
            for cluster in made:
                await cluster.close()


# ------------------------------------------------------------ append / read


async def test_append_returns_consecutive_offsets_and_a_second_batch_continues(make: Make) -> None:
    cluster = make()
    t = thread()
    assert await cluster.append(t, []) == []
    first = await cluster.append(t, [delta(1), delta(2), delta(3)])
    assert len(first) == 3 and first[0] > 0
    assert first == list(range(first[0], first[0] + 3))
    second = await cluster.append(t, [delta(4), delta(5)])
    assert second == [first[-1] + 1, first[-1] + 2]


async def test_any_replica_appends_after_everything_logged(make: Make) -> None:
    one, two = make(), make()
    t = thread()
    a = await one.append(t, [delta(1)])
    b = await two.append(t, [delta(2), delta(3)])
    c = await one.append(t, [delta(4)])
    assert b == [a[0] + 1, a[0] + 2] and c == [a[0] + 3]
    assert [x.seq for x in await two.read(t, 0)] == [1, 2, 3, 4]


async def test_read_returns_exactly_the_chunks_after_an_offset(make: Make) -> None:
    cluster = make()
    t = thread()
    chunks = [*run_chunks("run-1"), Chunk(Abort("ABORTED", "stopped"), "run-2", 1, parent_run_id="run-1")]
    offsets = await cluster.append(t, chunks[:3])
    offsets += await cluster.append(t, chunks[3:])
    logged = with_offsets(chunks, offsets)

    everything = await cluster.read(t, 0)
    assert everything == logged
    assert [(c.run_id, c.seq, c.payload) for c in everything] == [(c.run_id, c.seq, c.payload) for c in chunks]
    assert isinstance(everything[-2].payload, Finish) and everything[-2].payload.usage.output_tokens == 3

    assert await cluster.read(t, offsets[2]) == logged[3:]
    assert await cluster.read(t, offsets[0]) == logged[1:]
    assert await cluster.read(t, offsets[-2]) == logged[-1:]
    assert await cluster.read(t, offsets[-1]) == []
    assert await cluster.read(t, offsets[0] - 1) == logged  # just below the first: everything


async def test_read_of_an_unknown_thread_is_empty(make: Make) -> None:
    cluster = make()
    assert await cluster.read(thread(), 0) == []
    assert await cluster.read(thread(), 12345) == []


async def test_the_log_assigns_offsets_whatever_the_chunks_carry(make: Make) -> None:
    cluster = make()
    t = thread()
    offsets = await cluster.append(t, [replace(delta(1), offset=7), replace(delta(2), offset=7)])
    assert [c.offset for c in await cluster.read(t, 0)] == offsets


async def test_replicas_see_one_log_per_prefix(make: Make, redis_server: RedisServer) -> None:
    one, two = make(), make()
    t = thread()
    offsets = await one.append(t, [delta(1), delta(2)])
    assert await two.read(t, 0) == with_offsets([delta(1), delta(2)], offsets)
    other = RedisCluster(redis_server.url, key_prefix=f"t-{uuid.uuid4().hex}:")
    try:
        assert await other.read(t, 0) == []
        assert (await other.tail(t)).last_offset == 0
    finally:
        await other.close()


class NewerCluster(RedisCluster):
    """A replica of a later version: every chunk it logs carries a field this version does not know."""

    @staticmethod
    def _encode(chunk: Chunk) -> bytes:
        data = json.loads(RedisCluster._encode(chunk))
        data["payload"]["added_later"] = 1
        return json.dumps(data).encode()


async def test_a_newer_replicas_chunks_and_answers_read_as_what_this_version_knows(
    make: Make, redis_server: RedisServer
) -> None:
    # A rolling upgrade: the fields a newer replica adds are dropped, not the chunk or the answer.
    this = make()
    newer = NewerCluster(redis_server.url, key_prefix=this.key_prefix)
    try:
        t = thread()
        offsets = await newer.append(t, [delta(1), delta(2)])
        assert await this.read(t, 0) == with_offsets([delta(1), delta(2)], offsets)
        assert (await this.tail(t)).last == replace(delta(2), offset=offsets[-1])
        answer = json.loads(codec.encode({"action": "wake", "run_id": "r1", "signal": create_signal("reactive", "x")}))
        answer["signal"]["added_later"] = [1]
        await this.client.set(this.key("answer", "k"), json.dumps(answer), px=5_000)
        recalled = await this.recall_answer("k")
        assert recalled["run_id"] == "r1" and recalled["signal"].contents == "x"
    finally:
        await newer.close()


# ------------------------------------------------------------ tail / epochs


async def test_tail_epoch_is_stable_across_calls_and_appends(make: Make) -> None:
    one, two = make(), make()
    t = thread()
    offsets = await one.append(t, [delta(1), delta(2)])
    tail = await one.tail(t)
    assert tail.epoch
    assert tail.last_offset == offsets[-1]
    assert tail.dropped_until == 0
    assert tail.last == replace(delta(2), offset=offsets[-1])

    more = await two.append(t, [delta(3)])
    again = await two.tail(t)
    assert again.epoch == tail.epoch
    assert again.last_offset == more[0]
    assert again.last == replace(delta(3), offset=more[0])
    assert (await one.tail(t)).epoch == tail.epoch


async def test_tail_of_a_fresh_thread_has_an_epoch_and_nothing_logged(make: Make) -> None:
    cluster = make()
    t = thread()
    tail = await cluster.tail(t)
    assert tail.epoch
    assert (tail.last_offset, tail.dropped_until, tail.last) == (0, 0, None)
    assert (await cluster.tail(t)).epoch == tail.epoch
    # The first append keeps the epoch a subscriber was already given.
    offsets = await cluster.append(t, [delta(1)])
    after = await cluster.tail(t)
    assert after.epoch == tail.epoch and after.last_offset == offsets[0]


async def test_threads_have_different_epochs(make: Make) -> None:
    cluster = make()
    a, b, c = thread(), thread(), thread()
    await cluster.append(a, [delta(1)])
    await cluster.append(b, [delta(1)])
    epochs = {(await cluster.tail(a)).epoch, (await cluster.tail(b)).epoch, (await cluster.tail(c)).epoch}
    assert len(epochs) == 3


async def test_trimming_keeps_at_least_the_retention_and_reports_the_dropped_point(make: Make) -> None:
    retention = 5
    cluster = make(log_retention=retention)
    t = thread()
    offsets: list[int] = []
    for batch in range(6):
        offsets += await cluster.append(t, [delta(batch * 50 + i + 1) for i in range(50)])
    assert offsets == list(range(offsets[0], offsets[0] + 300))

    kept = await cluster.read(t, 0)
    assert len(kept) >= retention
    assert len(kept) < 300  # something was trimmed
    assert kept[-1].offset == offsets[-1] and kept[-1].seq == 300
    assert [c.offset for c in kept] == offsets[-len(kept) :]

    tail = await cluster.tail(t)
    assert tail.last_offset == offsets[-1]
    assert tail.dropped_until > 0
    assert all(c.offset > tail.dropped_until for c in kept)
    assert tail.dropped_until == kept[0].offset - 1

    # Offsets keep growing after a trim.
    assert await cluster.append(t, [delta(301)]) == [offsets[-1] + 1]


async def test_the_log_and_its_epoch_expire_after_the_ttl(make: Make) -> None:
    cluster = make(log_ttl_ms=300)
    t = thread()
    offsets = await cluster.append(t, [delta(1)])
    before = await cluster.tail(t)
    assert before.last_offset == offsets[0]

    await until(  # read leaves the epoch alone; tail would make a new one
        lambda: cluster.read(t, 0), holds=lambda chunks: chunks == [], within=3.0, step=0.05, what="the log to expire"
    )

    after = await cluster.tail(t)
    assert (after.last_offset, after.dropped_until, after.last) == (0, 0, None)
    assert after.epoch and after.epoch != before.epoch
    # A new log starts above the old one.
    assert (await cluster.append(t, [delta(1)]))[0] > offsets[0]
    assert (await cluster.tail(t)).epoch == after.epoch


async def test_an_append_pushes_the_expiry_back(make: Make) -> None:
    cluster = make(log_ttl_ms=400)
    t = thread()
    await cluster.append(t, [delta(1)])
    epoch = (await cluster.tail(t)).epoch
    for seq in range(2, 5):
        await asyncio.sleep(0.2)
        await cluster.append(t, [delta(seq)])
    # 0.6 s after the first append, past its ttl: still there, same epoch.
    assert [c.seq for c in await cluster.read(t, 0)] == [1, 2, 3, 4]
    assert (await cluster.tail(t)).epoch == epoch


def test_retention_and_ttl_must_be_positive(redis_server: RedisServer) -> None:
    with pytest.raises(ValueError):
        RedisCluster(redis_server.url, log_retention=0)
    with pytest.raises(ValueError):
        RedisCluster(redis_server.url, log_ttl_ms=0)


# ------------------------------------------------------------ read_new / interrupt_read


async def blocked(cluster: RedisCluster) -> None:
    """Waits until `cluster` is inside a blocking read_new whose XREAD reached
    Redis: its reader's connection is a blocked client there."""

    async def reader() -> list[dict[str, str]]:
        if not cluster._reading or cluster._reader_id is None:
            return []
        return await cluster.client.client_list(client_id=[cluster._reader_id])

    await until(
        reader,
        holds=lambda clients: any(c["cmd"] == "xread" and "b" in c["flags"] for c in clients),
        within=5.0,
        step=0.01,
        what="the reader blocked in XREAD",
    )


async def test_read_new_blocks_until_another_replica_appends(make: Make) -> None:
    follower, writer = make(), make()
    t = thread()
    start = await writer.append(t, [delta(1)])
    task = asyncio.create_task(follower.read_new({t: start[0]}, 5000))
    await blocked(follower)
    assert not task.done()

    offsets = await writer.append(t, [delta(2)])
    # Woken by the append: a read that ran out its block would answer nothing.
    got = await asyncio.wait_for(task, 10.0)
    assert got == {t: [replace(delta(2), offset=offsets[0])]}


async def test_read_new_sees_the_first_append_to_a_new_log(make: Make) -> None:
    follower, writer = make(), make()
    t = thread()
    task = asyncio.create_task(follower.read_new({t: 0}, 5000))
    await blocked(follower)
    offsets = await writer.append(t, [delta(1), delta(2)])
    got = await asyncio.wait_for(task, 3.0)
    assert got == {t: with_offsets([delta(1), delta(2)], offsets)}


async def test_read_new_returns_nothing_after_block_ms(make: Make) -> None:
    cluster = make()
    t = thread()
    offsets = await cluster.append(t, [delta(1)])
    # Nothing new: the read blocks in redis (it waits, it does not answer at once), then answers nothing.
    # (Blocked long enough for the test to see it blocked.)
    task = asyncio.create_task(cluster.read_new({t: offsets[-1]}, 2000))
    await blocked(cluster)
    assert await asyncio.wait_for(task, 30.0) == {}
    assert await cluster.read_new({}, 200) == {}


async def test_read_new_follows_several_threads_with_their_own_cursors(make: Make) -> None:
    cluster = make()
    a, b, c = thread(), thread(), thread()
    a_offsets = await cluster.append(a, [delta(1), delta(2), delta(3)])
    b_offsets = await cluster.append(b, [delta(1, "run-b"), delta(2, "run-b")])

    got = await cluster.read_new({a: a_offsets[0], b: b_offsets[-1], c: 0}, 200)
    assert got == {a: with_offsets([delta(2), delta(3)], a_offsets[1:])}

    got = await cluster.read_new({a: a_offsets[1], b: b_offsets[0]}, 200)
    assert got == {
        a: [replace(delta(3), offset=a_offsets[2])],
        b: [replace(delta(2, "run-b"), offset=b_offsets[1])],
    }

    # Blocked on all three, woken by the one that grows.
    task = asyncio.create_task(cluster.read_new({a: a_offsets[-1], b: b_offsets[-1], c: 0}, 5000))
    await blocked(cluster)
    writer = make()
    c_offsets = await writer.append(c, [delta(1, "run-c")])
    assert await asyncio.wait_for(task, 3.0) == {c: [replace(delta(1, "run-c"), offset=c_offsets[0])]}


async def test_interrupt_read_ends_a_blocking_read_new_early(make: Make) -> None:
    cluster = make()
    t = thread()
    # Blocked for longer than the test may run: only the interrupt can end it.
    task = asyncio.create_task(cluster.read_new({t: 0}, 600_000))
    await blocked(cluster)
    assert not task.done()
    await cluster.interrupt_read()
    assert await asyncio.wait_for(task, 10.0) == {}

    # The reader still works afterwards, and interrupting when nothing blocks is harmless.
    await cluster.interrupt_read()
    offsets = await cluster.append(t, [delta(1)])
    assert await cluster.read_new({t: 0}, 200) == {t: [replace(delta(1), offset=offsets[0])]}


# ------------------------------------------------------------ run markers


def marker(run_id: str, thread_id: str, replica: str = "replica-a") -> RunMarker:
    return RunMarker(run_id, thread_id, "user-1", "support", replica)


async def test_only_the_first_copy_of_a_request_claims_its_answer(make: Make) -> None:
    one, two = make(), make()
    signal = create_signal("user", "hi")
    assert await one.recall_answer("k") is None
    assert await one.claim_answer("k", 5_000) is True
    assert await two.claim_answer("k", 5_000) is False  # a retry on another replica
    assert await two.recall_answer("k") is PENDING  # being worked out
    await one.store_answer("k", {"action": "wake", "run_id": "r1", "signal": signal}, 5_000)
    assert await two.recall_answer("k") == {"action": "wake", "run_id": "r1", "signal": signal}
    assert await two.claim_answer("k", 5_000) is False


async def test_a_dropped_or_expired_claim_lets_a_retry_answer(make: Make) -> None:
    one = make()
    assert await one.claim_answer("k", 5_000)
    await one.drop_answer("k")  # the first copy failed
    assert await one.recall_answer("k") is None and await one.claim_answer("k", 5_000)
    assert await one.claim_answer("short", 100)
    await until(  # polls: never sleeps past the claim's ttl
        lambda: one.recall_answer("short"), holds=lambda answer: answer is None, what="the claim to expire"
    )
    assert await one.claim_answer("short", 100)


async def test_markers_round_trip(make: Make) -> None:
    one, two = make(), make()
    a, b = thread(), thread()
    ma, mb = marker("run-a", a), marker("run-b", b, "replica-b")
    assert await one.all_running() == []
    await one.mark_running(ma)
    await two.mark_running(mb)

    assert await two.running(a) == ma
    assert await one.running(b) == mb
    assert await two.run_marker("run-a") == ma
    assert await one.run_marker("run-b") == mb
    assert sorted(await one.all_running(), key=lambda m: m.run_id) == [ma, mb]
    assert await one.running(thread()) is None
    assert await one.run_marker("run-unknown") is None


async def test_unmark_removes_the_marker(make: Make) -> None:
    cluster = make()
    a, b = thread(), thread()
    await cluster.mark_running(marker("run-a", a))
    await cluster.mark_running(marker("run-b", b))
    await cluster.unmark(a, "run-a")
    assert await cluster.running(a) is None
    assert await cluster.run_marker("run-a") is None
    assert await cluster.all_running() == [marker("run-b", b)]
    await cluster.unmark(a, "run-a")  # again: nothing to do
    assert await cluster.all_running() == [marker("run-b", b)]


async def test_unmark_with_another_run_id_leaves_the_thread_marker(make: Make) -> None:
    cluster = make()
    t = thread()
    current = marker("run-2", t)
    await cluster.mark_running(current)
    await cluster.unmark(t, "run-1")
    assert await cluster.running(t) == current
    assert await cluster.run_marker("run-2") == current
    assert await cluster.run_marker("run-1") is None
    assert await cluster.all_running() == [current]


async def test_a_new_run_on_the_thread_replaces_the_old_marker(make: Make) -> None:
    cluster = make()
    t = thread()
    await cluster.mark_running(marker("run-1", t))
    await cluster.mark_running(marker("run-2", t, "replica-b"))
    assert await cluster.running(t) == marker("run-2", t, "replica-b")
    assert await cluster.run_marker("run-1") is None  # its thread runs another run now
    assert await cluster.run_marker("run-2") == marker("run-2", t, "replica-b")
    await cluster.unmark(t, "run-1")  # the old run ending late does not unmark the new one
    assert await cluster.running(t) == marker("run-2", t, "replica-b")


# ------------------------------------------------------------ requests


class Handler:
    """Answers requests: echo, errors, a slow op; records what it was asked."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.never = asyncio.Event()

    async def __call__(self, message: dict[str, Any]) -> dict[str, Any]:
        op, body = message["op"], message["body"]
        self.calls.append((op, body))
        if op == "echo":
            # Later requests answer first: replies come back out of order.
            await asyncio.sleep(0.002 * (20 - int(body.get("n", 0)) % 20))
            return {"by": self.name, "got": body}
        if op == "busy":
            raise FailedPrecondition("busy", "THREAD_BUSY", {"run_id": "r1"})
        if op == "invalid":
            raise InvalidArgument.fields([FieldViolation("thread_id", "required"), FieldViolation("x", "bad")])
        if op == "crash":
            raise RuntimeError("boom")
        if op == "slow":
            await self.never.wait()
            return {}
        raise AssertionError(f"unexpected op {op!r}")


async def serving(make: Make) -> tuple[RedisCluster, RedisCluster, Handler, Handler]:
    a, b = make(replica_id=f"a-{uuid.uuid4().hex[:6]}"), make(replica_id=f"b-{uuid.uuid4().hex[:6]}")
    ha, hb = Handler("a"), Handler("b")
    await a.serve(ha)
    await b.serve(hb)
    return a, b, ha, hb


async def test_request_returns_the_handlers_reply(make: Make) -> None:
    a, b, ha, hb = await serving(make)
    signal = create_signal("user", "hi")
    reply = await a.request(b.replica_id, {"op": "echo", "body": {"signal": signal, "n": 1}}, 5.0)
    assert reply == {"by": "b", "got": {"signal": signal, "n": 1}}
    assert reply["got"]["signal"] == signal and reply["got"]["signal"].text == "hi"
    assert hb.calls == [("echo", {"signal": signal, "n": 1})] and ha.calls == []
    # And the other way round.
    assert await b.request(a.replica_id, {"op": "echo", "body": {"n": 2}}, 5.0) == {"by": "a", "got": {"n": 2}}


async def test_a_handlers_agentd_error_is_raised_on_the_caller(make: Make) -> None:
    a, b, _, _ = await serving(make)
    with pytest.raises(FailedPrecondition) as busy:
        await a.request(b.replica_id, {"op": "busy", "body": {}}, 5.0)
    assert busy.value.reason == "THREAD_BUSY"
    assert busy.value.metadata == {"run_id": "r1"}
    assert busy.value.message == "busy"

    with pytest.raises(InvalidArgument) as invalid:
        await a.request(b.replica_id, {"op": "invalid", "body": {}}, 5.0)
    assert invalid.value.reason == "INVALID_REQUEST"
    assert invalid.value.violations == [FieldViolation("thread_id", "required"), FieldViolation("x", "bad")]


async def test_a_handler_crash_is_unavailable_replica_error(make: Make) -> None:
    a, b, _, _ = await serving(make)
    with pytest.raises(Unavailable) as crash:
        await a.request(b.replica_id, {"op": "crash", "body": {}}, 5.0)
    assert crash.value.reason == "REPLICA_ERROR"
    assert "boom" in crash.value.message
    # The replica keeps answering afterwards.
    assert await a.request(b.replica_id, {"op": "echo", "body": {}}, 5.0) == {"by": "b", "got": {}}


async def test_request_to_a_replica_nobody_serves_is_peer_gone_at_once(make: Make) -> None:
    a, b, _, _ = await serving(make)
    # PeerGone, not PeerTimeout: nothing waited out the request's timeout (longer than the test may run).
    with pytest.raises(PeerGone):
        await a.request("nobody-" + uuid.uuid4().hex[:6], {"op": "echo", "body": {}}, 600.0)
    # A replica that stopped serving is gone too.
    gone = b.replica_id
    await b.close()
    with pytest.raises(PeerGone):
        await a.request(gone, {"op": "echo", "body": {}}, 600.0)


async def test_a_slow_handler_is_peer_timeout(make: Make) -> None:
    a, b, _, hb = await serving(make)
    with pytest.raises(PeerTimeout):
        await a.request(b.replica_id, {"op": "slow", "body": {}}, 0.2)
    # It timed out waiting on a replica that got the request and has not answered.
    assert hb.calls == [("slow", {})]
    assert not hb.never.is_set()
    # The late answer does not confuse the next request.
    hb.never.set()
    assert await a.request(b.replica_id, {"op": "echo", "body": {"n": 3}}, 5.0) == {"by": "b", "got": {"n": 3}}


async def test_concurrent_requests_each_get_their_own_reply(make: Make) -> None:
    a, b, _, _ = await serving(make)
    replies = await asyncio.gather(
        *(a.request(b.replica_id, {"op": "echo", "body": {"n": i}}, 5.0) for i in range(20)),
        *(b.request(a.replica_id, {"op": "echo", "body": {"n": i}}, 5.0) for i in range(20, 25)),
    )
    assert replies == [{"by": "b", "got": {"n": i}} for i in range(20)] + [
        {"by": "a", "got": {"n": i}} for i in range(20, 25)
    ]


async def test_request_before_serve_is_a_runtime_error(make: Make) -> None:
    a, b = make(), make()
    await b.serve(Handler("b"))
    with pytest.raises(RuntimeError, match="serve"):
        await a.request(b.replica_id, {"op": "echo", "body": {}}, 1.0)
    with pytest.raises(RuntimeError, match="already serving"):
        await b.serve(Handler("b"))


async def test_replica_ids_are_unique_unless_given(make: Make) -> None:
    assert len({make().replica_id for _ in range(5)}) == 5
    assert make(replica_id="r-1").replica_id == "r-1"


# ------------------------------------------------------------ no server


@pytest.mark.timeout(60)  # each call fails on its socket timeout: none hangs
async def test_an_unreachable_redis_raises_cluster_error() -> None:
    cluster = RedisCluster(f"redis://127.0.0.1:{free_port()}/0", socket_timeout=0.5)
    try:
        for call in (
            cluster.append("t", [delta(1)]),
            cluster.tail("t"),
            cluster.read("t", 0),
            cluster.read_new({"t": 0}, 100),
            cluster.mark_running(marker("run-1", "t")),
            cluster.unmark("t", "run-1"),
            cluster.running("t"),
            cluster.run_marker("run-1"),
            cluster.all_running(),
            cluster.claim_answer("k", 1_000),
            cluster.store_answer("k", {}, 1_000),
            cluster.recall_answer("k"),
            cluster.drop_answer("k"),
        ):
            with pytest.raises(ClusterError, match="redis cluster"):
                await call
    finally:
        await cluster.close()


async def test_a_shared_log_append_waits_out_a_short_outage_and_loses_nothing() -> None:
    """Chunks appended while Redis is down reach the log (and so live
    subscribers) once it is back, in order, instead of being dropped."""
    server = RedisServer.start_new(persistent=True)
    cluster = RedisCluster(server.url, key_prefix=f"t-{uuid.uuid4().hex}:", socket_timeout=0.5)
    shared = SharedThreadLog(cluster, subscriber_buffer=100, patience=30)
    tid = thread()
    try:
        await shared.append(tid, run_chunks("run-1", deltas=1)[:2])  # before: start and a delta
        server.stop()
        during = asyncio.ensure_future(shared.append(tid, run_chunks("run-1", deltas=1)[2:]))
        await asyncio.sleep(0.3)  # a few failed attempts
        assert not during.done()
        server.start()
        await asyncio.wait_for(during, 30)
        logged = await cluster.read(tid, 0)
        assert [c.seq for c in logged] == [1, 2, 3]
        assert sorted(c.offset for c in logged) == [c.offset for c in logged]
        assert isinstance(logged[-1].payload, Finish)
    finally:
        await shared.close()
        await cluster.close()
        server.close()


async def test_a_shared_log_append_gives_up_after_its_patience(caplog: pytest.LogCaptureFixture) -> None:
    cluster = RedisCluster(f"redis://127.0.0.1:{free_port()}/0", socket_timeout=0.2)
    shared = SharedThreadLog(cluster, subscriber_buffer=10, patience=0.3)
    try:
        await asyncio.wait_for(shared.append(thread(), run_chunks()), 10)  # returns: never hangs a run's pump
    finally:
        await shared.close()
        await cluster.close()
    assert any("not logged for subscribers" in r.getMessage() for r in caplog.records)
