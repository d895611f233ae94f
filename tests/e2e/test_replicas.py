"""Three `agentd serve` processes on one real redis-server, over loopback: a
thread behaves as one conversation whichever replica a caller reaches.

Leases are short (TTL_MS) so takeover is quick; no test sleeps longer than
the TTL it configures (they poll)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, signal_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.polling import until

from .serverproc import ServerProcess, start_server

TTL_MS = 1000
#: The held/ test model (a reply held until a file exists): tests/support_models.py.
APP_ARGS = ["--app", "tests.held_app"]
POLL = TTL_MS / 1000 / 10

CONFIG = """
[coordination]
backend = "redis"
redis_url = "{url}"
lease_ttl_ms = {ttl}
key_prefix = "{prefix}lease:"
cluster_key_prefix = "{prefix}cluster:"

[storage]
key_prefix = "{prefix}store:"

[cache]
key_prefix = "{prefix}cache:"

[threads]
notification_dispatch_interval_seconds = 0.2

[[agents]]
id = "held"
model = "held/scripted"
memory = {{ last_messages = 20 }}
default_options = {{ provider_options = {{ local = {{ script = [
  {{ deltas = ["good ", "morning"] }},
  {{ text = "noted" }},
] }}, held = {{ afterDeltas = 1, releaseFile = "{release}" }} }} }}

[[agents]]
id = "chat"
model = "local/echo"
memory = {{ last_messages = 20 }}

[[agents]]
id = "asker"
model = "local/scripted"
memory = {{ last_messages = 20 }}
default_options = {{ provider_options = {{ local = {{ script = [
  {{ toolCalls = [ {{ id = "call-1", name = "pick_color", args = {{}} }} ] }},
  {{ text = "done" }},
] }} }} }}

[[agents]]
id = "slow"
model = "local/scripted"
memory = {{ last_messages = 20 }}
default_options = {{ provider_options = {{ local = {{ script = [
  {{ deltas = ["one ", "two ", "three ", "four ", "five ", "six ", "seven ", "eight"], delayMs = 300 }},
] }} }} }}
"""


@dataclass
class Replicas:
    servers: dict[str, ServerProcess]
    release: Path
    redis_url: str
    prefix: str

    def addr(self, name: str) -> str:
        return self.servers[name].addr


def start_replicas(tmp_path: Path, redis_url: str, names: tuple[str, ...] = ("a", "b", "c")) -> Replicas:
    prefix = f"replicas-{uuid.uuid4().hex[:8]}:"
    release = tmp_path / "release"
    cfg = tmp_path / "agentd.toml"
    cfg.write_text(CONFIG.format(url=redis_url, ttl=TTL_MS, prefix=prefix, release=release))
    servers = {name: start_server(APP_ARGS, config=cfg, log_dir=tmp_path / name) for name in names}
    for server in servers.values():
        server.wait_serving(timeout=30)
    return Replicas(servers, release, redis_url, prefix)


def stop_replicas(replicas: Replicas) -> None:
    for server in replicas.servers.values():
        if server.proc.poll() is None:
            server.stop()


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, redis_server: object) -> Iterator[Replicas]:
    started = start_replicas(tmp_path_factory.mktemp("replicas"), redis_server.url)  # type: ignore[attr-defined]
    try:
        yield started
    finally:
        stop_replicas(started)


def target(thread_id: str) -> spb.SignalTarget:
    return spb.SignalTarget(resource_id="u1", thread_id=thread_id)


async def send(addr: str, agent: str, thread_id: str, text: str, **extra: Any) -> sspb.SendMessageResponse:
    extra.setdefault("message", spb.MessageInput(text=text))
    async with grpc.aio.insecure_channel(addr) as channel:
        reply: sspb.SendMessageResponse = await signal_service_pb2_grpc.SignalServiceStub(channel).SendMessage(
            sspb.SendMessageRequest(agent_id=agent, target=target(thread_id), **extra),
            timeout=30,
        )
        return reply


def decision(reply: sspb.SendMessageResponse | sspb.QueueMessageResponse) -> tuple[str, str]:
    action = reply.decision.WhichOneof("action")
    assert action is not None
    return action, getattr(reply.decision, action).run_id


class Subscription:
    """A Subscribe stream read in the background: the snapshot, then every chunk."""

    def __init__(self, addr: str, thread_id: str, resume: tpb.ResumePoint | None = None) -> None:
        self.channel = grpc.aio.insecure_channel(addr)
        stub = thread_service_pb2_grpc.ThreadServiceStub(self.channel)
        self.call = stub.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id=thread_id, resume=resume))
        self.snapshot: tpb.ThreadSnapshot | None = None
        self.chunks: list[cpb.Chunk] = []
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for response in self.call:
            if response.HasField("snapshot"):
                self.snapshot = response.snapshot
            elif response.HasField("chunks"):
                self.chunks.extend(response.chunks.chunks)

    async def started(self) -> tpb.ThreadSnapshot:
        await self.until(lambda: self.snapshot is not None)
        assert self.snapshot is not None
        return self.snapshot

    async def until(self, condition: Callable[[], object], within: float = 10 * TTL_MS / 1000) -> None:
        """Polls until `condition` holds; fails with the chunks so far, or as soon as the subscription ends."""

        def kinds() -> list[str]:
            if self._task.done() and not condition():
                self._task.result()
                raise AssertionError("the subscription ended")
            return [kind(c) for c in self.chunks]

        await until(kinds, holds=lambda _: condition(), within=within, step=POLL / 4, what="the watched chunks")

    def of(self, run_id: str) -> list[cpb.Chunk]:
        return [c for c in self.chunks if c.run_id == run_id]

    async def close(self) -> None:
        self.call.cancel()
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        await self.channel.close()


def kind(chunk: cpb.Chunk) -> str:
    return chunk.WhichOneof("payload") or ""


def ended(chunks: list[cpb.Chunk]) -> bool:
    return any(kind(c) in ("finish", "error", "abort") for c in chunks)


async def subscribed(addr: str, thread_id: str, resume: tpb.ResumePoint | None = None) -> Subscription:
    subscription = Subscription(addr, thread_id, resume)
    await subscription.started()
    return subscription


async def active_run(addr: str, thread_id: str) -> str:
    """The active run as `addr` sees it (a snapshot: the thread may not be saved yet)."""
    subscription = await subscribed(addr, thread_id)
    await subscription.close()
    assert subscription.snapshot is not None
    return str(subscription.snapshot.active_run_id)


async def hold_a_run(replicas: Replicas, watcher: Subscription, thread_id: str, text: str) -> str:
    """Wakes the `held` agent on replica A; its run id once its first delta is out (it then holds)."""
    action, run_id = decision(await send(replicas.addr("a"), "held", thread_id, text))
    assert action == "wake"
    await watcher.until(lambda: any(kind(c) == "text_delta" for c in watcher.of(run_id)))
    return run_id


# ---------------------------------------------------------------- delivery and fan-out


async def test_a_signal_sent_to_b_is_delivered_into_the_run_on_a_and_c_sees_it_in_order(
    replicas: Replicas, tmp_path: Path
) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    watcher = await subscribed(replicas.addr("c"), thread)
    try:
        run_a = await hold_a_run(replicas, watcher, thread, "hello")

        async with grpc.aio.insecure_channel(replicas.addr("b")) as channel:
            reply = await signal_service_pb2_grpc.SignalServiceStub(channel).SendSignal(
                sspb.SendSignalRequest(
                    agent_id="held",
                    target=target(thread),
                    signal=spb.SignalInput(type="reactive", text="the build is green"),
                )
            )
        assert decision(reply) == ("deliver", run_a)  # A's answer, through B
        assert await active_run(replicas.addr("b"), thread) == run_a
        async with grpc.aio.insecure_channel(replicas.addr("c")) as channel:
            found = await thread_service_pb2_grpc.ThreadServiceStub(channel).GetThread(
                tpb.GetThreadRequest(resource_id="u1", thread_id=thread)
            )
        assert found.active_run_id == run_a  # stored when its first run began, seen from any replica

        replicas.release.touch()
        await watcher.until(lambda: ended(watcher.of(run_a)))
        chunks = watcher.of(run_a)
        assert kind(chunks[-1]) == "finish"
        echoes = [c.signal.signal.text for c in chunks if kind(c) == "signal"]
        assert "the build is green" in echoes  # the signal reached A's run
        assert [c.seq for c in chunks] == sorted(c.seq for c in chunks)  # in run order
        offsets = [c.offset for c in watcher.chunks]
        assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
        assert {c.run_id for c in watcher.chunks} == {run_a}  # one run

        # Resume on B from the middle of what C saw: the same chunks, the same offsets.
        snapshot = watcher.snapshot
        assert snapshot is not None
        middle = watcher.chunks[len(watcher.chunks) // 2]
        resumed = await subscribed(
            replicas.addr("b"), thread, tpb.ResumePoint(log_epoch=snapshot.log_epoch, after_offset=middle.offset)
        )
        try:
            expected = [(c.offset, c.seq, kind(c)) for c in watcher.chunks if c.offset > middle.offset]
            await resumed.until(lambda: len(resumed.chunks) >= len(expected))
            assert [(c.offset, c.seq, kind(c)) for c in resumed.chunks] == expected
        finally:
            await resumed.close()
    finally:
        replicas.release.unlink(missing_ok=True)
        await watcher.close()


async def test_a_signal_aimed_at_a_run_id_alone_reaches_it_from_any_replica(replicas: Replicas) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    watcher = await subscribed(replicas.addr("b"), thread)
    try:
        run_a = await hold_a_run(replicas, watcher, thread, "hello")
        async with grpc.aio.insecure_channel(replicas.addr("c")) as channel:
            stub = signal_service_pb2_grpc.SignalServiceStub(channel)
            reply = await stub.SendSignal(
                sspb.SendSignalRequest(
                    agent_id="held",
                    target=spb.SignalTarget(run_id=run_a),
                    signal=spb.SignalInput(type="reactive", text="by run id"),
                )
            )
            assert decision(reply) == ("deliver", run_a)
            with pytest.raises(grpc.aio.AioRpcError) as missing:
                await stub.SendSignal(
                    sspb.SendSignalRequest(
                        agent_id="held",
                        target=spb.SignalTarget(run_id="no-such-run"),
                        signal=spb.SignalInput(type="reactive", text="lost"),
                    )
                )
            assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        replicas.release.touch()
        await watcher.until(lambda: ended(watcher.of(run_a)))
        assert "by run id" in [c.signal.signal.text for c in watcher.of(run_a) if kind(c) == "signal"]
    finally:
        replicas.release.unlink(missing_ok=True)
        await watcher.close()


async def test_a_client_tool_result_sent_through_another_replica_reaches_the_run(replicas: Replicas) -> None:
    """A Connect stream on A starts a run that calls a client tool; a Connect
    stream on B sees the call (fan-out) and answers it (forwarded to A)."""
    thread = f"t-{uuid.uuid4().hex[:8]}"
    options = opb.ExecutionOptions(client_tools=[opb.ClientTool(name="pick_color")])
    streams: dict[str, tuple[asyncio.Queue[tpb.ConnectRequest], object]] = {}
    channels = {name: grpc.aio.insecure_channel(replicas.addr(name)) for name in ("a", "b")}
    try:
        for name, channel in channels.items():
            frames: asyncio.Queue[tpb.ConnectRequest] = asyncio.Queue()

            async def outgoing(frames: asyncio.Queue[tpb.ConnectRequest] = frames) -> object:
                while True:
                    yield await frames.get()

            call = thread_service_pb2_grpc.ThreadServiceStub(channel).Connect(outgoing())
            open_ = tpb.ConnectOpen(agent_id="asker", resource_id="u1", thread_id=thread, stream_options=options)
            await frames.put(tpb.ConnectRequest(request_id="open", open=open_))
            assert (await call.read()).HasField("snapshot")
            streams[name] = (frames, call)

        frames_a = streams["a"][0]
        await frames_a.put(
            tpb.ConnectRequest(
                request_id="m", send_message=tpb.ConnectSendMessage(message=spb.MessageInput(text="pick"))
            )
        )
        frames_b, call_b = streams["b"]
        run_id = ""
        while True:  # B sees A's run call the tool
            message = await asyncio.wait_for(call_b.read(), 10)  # type: ignore[attr-defined]
            calls = [c for c in message.chunks.chunks if c.HasField("tool_call")] if message.HasField("chunks") else []
            if calls:
                run_id = calls[0].run_id
                break
        result = struct_pb2.Value(string_value="teal")
        await frames_b.put(
            tpb.ConnectRequest(
                request_id="answer",
                tool_result=tpb.ConnectToolResult(run_id=run_id, tool_call_id="call-1", result=result),
            )
        )
        seen: list[cpb.Chunk] = []
        acked = False
        while not ended([c for c in seen if c.run_id == run_id]):
            message = await asyncio.wait_for(call_b.read(), 10)  # type: ignore[attr-defined]
            if message.request_id == "answer":
                assert message.HasField("tool_result_ack"), message
                acked = True
            if message.HasField("chunks"):
                seen.extend(message.chunks.chunks)
        assert acked
        results = [c.tool_result for c in seen if kind(c) == "tool_result"]
        assert results and results[0].result.string_value == "teal"
        assert kind(seen[-1]) == "finish"

        await frames_b.put(
            tpb.ConnectRequest(
                request_id="again",
                tool_result=tpb.ConnectToolResult(run_id=run_id, tool_call_id="call-1", result=result),
            )
        )
        while True:
            message = await asyncio.wait_for(call_b.read(), 10)  # type: ignore[attr-defined]
            if message.request_id == "again":
                break
        assert message.HasField("error") and message.error.code == grpc.StatusCode.NOT_FOUND.value[0]
    finally:
        for _, call in streams.values():
            call.cancel()  # type: ignore[attr-defined]
        for channel in channels.values():
            await channel.close()


async def test_a_retried_message_gets_the_first_answer_on_any_replica(replicas: Replicas) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    message_id = f"m-{uuid.uuid4().hex[:8]}"
    watcher = await subscribed(replicas.addr("c"), thread)
    try:
        copies = await asyncio.gather(  # two copies at once, on two replicas
            send(replicas.addr("a"), "slow", thread, "count", message=spb.MessageInput(id=message_id, text="count")),
            send(replicas.addr("b"), "slow", thread, "count", message=spb.MessageInput(id=message_id, text="count")),
        )
        first = decision(copies[0])
        assert first[0] == "wake" and decision(copies[1]) == first
        await watcher.until(lambda: ended(watcher.of(first[1])))
        # The thread is idle now; a late retry on a third replica must not wake it again.
        late = await send(
            replicas.addr("c"), "slow", thread, "count", message=spb.MessageInput(id=message_id, text="count")
        )
        assert decision(late) == first
        assert {c.run_id for c in watcher.chunks} == {first[1]}
        echoes = [c for c in watcher.chunks if kind(c) == "signal"]
        assert len(echoes) <= 1
    finally:
        await watcher.close()


async def test_a_thread_bound_generate_answered_on_one_replica_leaves_the_thread_free_on_every_other(
    replicas: Replicas,
) -> None:
    """Back-to-back Generate calls on one thread, each on the next replica: the
    answer comes once the thread is let go, so the next call never meets THREAD_BUSY."""
    thread = f"t-{uuid.uuid4().hex[:8]}"
    options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id=thread))
    names = ("a", "b", "c")
    for i in range(30):
        async with grpc.aio.insecure_channel(replicas.addr(names[i % 3])) as channel:
            reply = await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                apb.GenerateRequest(agent_id="chat", text=f"turn {i}", options=options), timeout=30
            )
        assert reply.text == f"turn {i}"
    async with grpc.aio.insecure_channel(replicas.addr("a")) as channel:
        listed = await thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
            tpb.ListMessagesRequest(thread_id=thread, page_size=100)
        )
    assert len(listed.messages) == 60  # every turn and its answer, once


async def test_an_abort_sent_to_any_replica_stops_the_run(replicas: Replicas) -> None:
    for sent_to in ("b", "c", "a"):
        thread = f"t-{uuid.uuid4().hex[:8]}"
        watcher = await subscribed(replicas.addr("b"), thread)
        try:
            run_id = await hold_a_run(replicas, watcher, thread, "hold on")
            async with grpc.aio.insecure_channel(replicas.addr(sent_to)) as channel:
                reply = await thread_service_pb2_grpc.ThreadServiceStub(channel).AbortRun(
                    tpb.AbortRunRequest(resource_id="u1", thread_id=thread)
                )
            assert (reply.aborted, reply.run_id) == (True, run_id)
            await watcher.until(lambda: ended(watcher.of(run_id)))  # noqa: B023
            last = watcher.of(run_id)[-1]
            assert kind(last) == "abort" and last.abort.reason == "ABORTED"
            for name in ("a", "b", "c"):
                assert await active_run(replicas.addr(name), thread) == ""
        finally:
            await watcher.close()


async def test_two_replicas_racing_to_wake_one_thread_start_one_run_50_times(
    replicas: Replicas, tmp_path: Path
) -> None:
    for i in range(50):
        thread = f"race-{uuid.uuid4().hex[:8]}"
        release = tmp_path / f"release-{i}"
        options = opb.ExecutionOptions()
        options.provider_options.update(
            {
                "local": {"script": [{"deltas": ["go ", "on"]}]},
                "held": {"afterDeltas": 1, "releaseFile": str(release)},
            }
        )
        idle = spb.IfIdle(stream_options=options)
        first, second = ("a", "b") if i % 2 == 0 else ("b", "a")
        replies = await asyncio.gather(
            send(replicas.addr(first), "held", thread, f"from {first}", if_idle=idle),
            send(replicas.addr(second), "held", thread, f"from {second}", if_idle=idle),
        )
        decisions = sorted(decision(r) for r in replies)
        assert [action for action, _ in decisions] == ["deliver", "wake"], decisions
        assert decisions[0][1] == decisions[1][1]  # the loser answers with the winner's run id
        run_id = decisions[1][1]
        watcher = await subscribed(replicas.addr("c"), thread)
        try:
            release.touch()
            await watcher.until(lambda: ended(watcher.of(run_id)))  # noqa: B023
            assert kind(watcher.of(run_id)[-1]) == "finish"
        finally:
            await watcher.close()
        async with grpc.aio.insecure_channel(replicas.addr("c")) as channel:
            listed = await thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
                tpb.ListMessagesRequest(thread_id=thread)
            )
        texts = sorted(p.signal.signal.text for m in listed.messages for p in m.parts if p.HasField("signal"))
        assert texts == ["from a", "from b"]  # both in the one run's history


async def test_lease_renewal_keeps_a_run_longer_than_the_ttl_alive(replicas: Replicas) -> None:
    thread = f"t-{uuid.uuid4().hex[:8]}"
    watcher = await subscribed(replicas.addr("c"), thread)
    try:
        action, run_id = decision(await send(replicas.addr("a"), "slow", thread, "count"))  # ~2.4 s: over 2 TTLs
        assert action == "wake"
        loop = asyncio.get_running_loop()
        started = loop.time()
        seen_after_ttl = 0
        async with asyncio.timeout(10 * TTL_MS / 1000):  # a bound on the test, not a measurement
            while not ended(watcher.of(run_id)):
                # When to look (past the TTL, before the run can have ended), not an assertion.
                elapsed = loop.time() - started
                if 1.2 * TTL_MS / 1000 < elapsed < 2.0 * TTL_MS / 1000:  # the run lasts 2.4 s at least
                    # Past the TTL the lease is still A's run's (renewed), as every replica sees it.
                    assert await active_run(replicas.addr("b"), thread) == run_id
                    seen_after_ttl += 1
                await asyncio.sleep(POLL)
        assert seen_after_ttl > 0
        chunks = watcher.of(run_id)
        assert kind(chunks[-1]) == "finish"
        text = "".join(c.text_delta.text for c in chunks if kind(c) == "text_delta")
        assert text == "one two three four five six seven eight"
        assert {c.run_id for c in watcher.chunks} == {run_id}
    finally:
        await watcher.close()


# ---------------------------------------------------------------- takeover


async def test_sigkill_of_the_lease_holder_ends_its_run_with_replica_lost_and_queued_work_runs_once_elsewhere(
    tmp_path: Path, redis_server: object
) -> None:
    replicas = start_replicas(tmp_path, redis_server.url)  # type: ignore[attr-defined]
    thread = f"t-{uuid.uuid4().hex[:8]}"
    try:
        watcher = await subscribed(replicas.addr("c"), thread)
        try:
            run_a = await hold_a_run(replicas, watcher, thread, "hello")
            async with grpc.aio.insecure_channel(replicas.addr("b")) as channel:
                queued = await signal_service_pb2_grpc.SignalServiceStub(channel).QueueMessage(
                    sspb.QueueMessageRequest(
                        agent_id="held", target=target(thread), message=spb.MessageInput(text="queued for later")
                    )
                )
            assert decision(queued)[0] == "deliver"
            async with grpc.aio.insecure_channel(replicas.addr("c")) as channel:
                notified = await signal_service_pb2_grpc.SignalServiceStub(channel).SendNotification(
                    sspb.SendNotificationRequest(
                        agent_id="held",
                        resource_id="u1",
                        thread_id=thread,
                        notification=spb.NotificationInput(
                            source="ci",
                            kind="deploy",
                            summary="deploy finished",
                            priority=spb.NOTIFICATION_PRIORITY_HIGH,
                        ),
                    )
                )
            # High on an active thread: a summary now, the full notification once the thread is idle.
            assert notified.decision.reason == "active-high-summary-then-full"

            killed = replicas.servers["a"]
            killed.proc.send_signal(signal.SIGKILL)
            killed.proc.wait(timeout=10)
            # Sent while A's lease still lives: C waits for it to expire, never answers with A's run.
            late = asyncio.ensure_future(send(replicas.addr("c"), "held", thread, "after the loss"))
            replicas.release.touch()  # the replayed runs may finish

            await watcher.until(lambda: ended(watcher.of(run_a)), within=10 * TTL_MS / 1000)
            last = watcher.of(run_a)[-1]
            assert kind(last) == "abort" and last.abort.reason == "REPLICA_LOST"
            assert "stopped, or lost the shared state, while the run was in flight" in last.abort.message

            def queued_run_finished() -> bool:
                return any(
                    kind(c) == "signal" and c.signal.signal.text == "queued for later" for c in watcher.chunks
                ) and all(ended(watcher.of(r)) for r in {c.run_id for c in watcher.chunks})

            await watcher.until(queued_run_finished, within=10 * TTL_MS / 1000)

            def full_notification() -> list[cpb.Chunk]:
                return [
                    c
                    for c in watcher.chunks
                    if kind(c) == "signal" and c.signal.signal.tag_name == "notification" and c.run_id != run_a
                ]

            # The deferred full delivery goes out from a live replica once the thread is idle.
            await watcher.until(lambda: full_notification(), within=10 * TTL_MS / 1000)
            assert "deploy finished" in full_notification()[0].signal.signal.text
            await watcher.until(lambda: ended(watcher.of(full_notification()[0].run_id)), within=10 * TTL_MS / 1000)

            action, run_id = decision(await late)
            assert action in ("wake", "deliver") and run_id != run_a
            await watcher.until(lambda: ended(watcher.of(run_id)), within=10 * TTL_MS / 1000)
            assert kind(watcher.of(run_id)[-1]) == "finish"
        finally:
            await watcher.close()
        async with grpc.aio.insecure_channel(replicas.addr("b")) as channel:
            listed = await thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
                tpb.ListMessagesRequest(thread_id=thread)
            )
        texts = [p.signal.signal.text for m in listed.messages for p in m.parts if p.HasField("signal")]
        assert texts.count("queued for later") == 1  # once
        assert texts.count("after the loss") == 1

        async def active() -> list[str]:
            return [await active_run(replicas.addr(name), thread) for name in ("b", "c")]

        await until(  # it settles: idle
            active, holds=lambda runs: not any(runs), within=10 * TTL_MS / 1000, step=POLL, what="the thread idle"
        )
    finally:
        stop_replicas(replicas)


def test_a_replica_whose_redis_is_down_refuses_to_start_with_a_clear_message(tmp_path: Path) -> None:
    from redis_server import free_port

    from .serverproc import agentd_executable

    cfg = tmp_path / "agentd.toml"
    cfg.write_text(f'[coordination]\nbackend = "redis"\nredis_url = "redis://127.0.0.1:{free_port()}/0"\n')
    done = subprocess.run(
        [str(agentd_executable()), "serve", "--config", str(cfg), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("agentd: cannot start: the replicas' shared state")
    assert "Traceback" not in done.stderr
