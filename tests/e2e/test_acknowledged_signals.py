"""Nothing acknowledged is lost: a signal answered `deliver` into a run held open
by a client tool, or a message answered `wake` whose run is still streaming,
survives a SIGKILL, is replayed once after a restart on the same SQLite file,
and is never executed twice."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import signal_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.polling import until

from .serverproc import ServerProcess, start_server

CONFIG = """
[storage]
backend = "sqlite"
path = "{db}"

[threads]
client_tool_timeout_seconds = 1

[[agents]]
id = "holder"
model = "local/scripted"
memory = {{ last_messages = 20 }}
default_options = {{ provider_options = {{ local = {{ script = [
  {{ toolCalls = [ {{ id = "call-1", name = "pick_color", args = {{}} }} ] }},
  {{ text = "done" }},
] }} }} }}

[[agents]]
id = "sleeper"
model = "held/scripted"
memory = {{ last_messages = 20 }}
default_options = {{ provider_options = {{ local = {{ script = [
  {{ deltas = ["good ", "morning"] }},
] }}, held = {{ afterDeltas = 1, releaseFile = "{release}" }} }} }}
"""


def serving(cfg: Path, log_dir: Path) -> ServerProcess:
    server = start_server(["--app", "tests.held_app"], config=cfg, log_dir=log_dir)  # the held/ test model
    server.wait_serving(timeout=30)
    return server


async def survivors(addr: str, thread_id: str = "t1", text: str = "must survive") -> list[tpb.Message]:
    async with grpc.aio.insecure_channel(addr) as channel:
        threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
        try:
            listed = await threads.ListMessages(tpb.ListMessagesRequest(thread_id=thread_id))
        except grpc.aio.AioRpcError:
            return []
        return [m for m in listed.messages if m.role == 4 and m.parts[0].signal.signal.text == text]


async def test_a_delivered_signal_survives_sigkill_and_runs_once(tmp_path: Path) -> None:
    cfg = tmp_path / "agentd.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "agentd.db", release=tmp_path / "release"))
    first = serving(cfg, tmp_path / "a")
    try:
        async with grpc.aio.insecure_channel(first.addr) as channel:
            frames: asyncio.Queue[tpb.ConnectRequest] = asyncio.Queue()

            async def outgoing() -> AsyncIterator[tpb.ConnectRequest]:
                while True:
                    yield await frames.get()

            connect = thread_service_pb2_grpc.ThreadServiceStub(channel).Connect(outgoing())
            await frames.put(
                tpb.ConnectRequest(open=tpb.ConnectOpen(agent_id="holder", resource_id="u1", thread_id="t1"))
            )
            await connect.read()  # snapshot
            options = opb.ExecutionOptions(client_tools=[opb.ClientTool(name="pick_color")])
            await frames.put(
                tpb.ConnectRequest(
                    request_id="m",
                    send_message=tpb.ConnectSendMessage(
                        message=spb.MessageInput(text="start"), if_idle=spb.IfIdle(stream_options=options)
                    ),
                )
            )
            while True:  # until the run waits for the client tool
                message = await connect.read()
                if message.HasField("chunks") and any(c.HasField("tool_call") for c in message.chunks.chunks):
                    break
            reply = await signal_service_pb2_grpc.SignalServiceStub(channel).SendMessage(
                sspb.SendMessageRequest(
                    agent_id="holder",
                    target=spb.SignalTarget(resource_id="u1", thread_id="t1"),
                    message=spb.MessageInput(text="must survive"),
                )
            )
            assert reply.decision.WhichOneof("action") == "deliver"
            first.proc.send_signal(signal.SIGKILL)  # the run never ends: only the outbox remembers
            first.proc.wait(timeout=10)
    finally:
        if first.proc.poll() is None:
            first.proc.kill()

    second = serving(cfg, tmp_path / "b")
    try:
        # The replayed run: its client tool times out (1 s), then it answers.
        found = await until(lambda: survivors(second.addr), within=20, step=0.2, what="the replayed run's answer")
        assert len(found) == 1
        async with grpc.aio.insecure_channel(second.addr) as channel:
            before = (
                await thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
                    tpb.ListMessagesRequest(thread_id="t1")
                )
            ).messages
    finally:
        assert second.stop() == 0

    third = serving(cfg, tmp_path / "c")  # a clean restart replays nothing
    try:
        await asyncio.sleep(1.5)
        async with grpc.aio.insecure_channel(third.addr) as channel:
            after = (
                await thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
                    tpb.ListMessagesRequest(thread_id="t1")
                )
            ).messages
        assert [m.id for m in after] == [m.id for m in before]
        assert len(await survivors(third.addr)) == 1
    finally:
        assert third.stop() == 0


async def test_a_waking_message_survives_sigkill_mid_run_and_runs_once(tmp_path: Path) -> None:
    cfg = tmp_path / "agentd.toml"
    release = tmp_path / "release"
    cfg.write_text(CONFIG.format(db=tmp_path / "agentd.db", release=release))
    first = serving(cfg, tmp_path / "a")
    try:
        async with grpc.aio.insecure_channel(first.addr) as channel:
            reply = await signal_service_pb2_grpc.SignalServiceStub(channel).SendMessage(
                sspb.SendMessageRequest(
                    agent_id="sleeper",
                    target=spb.SignalTarget(resource_id="u1", thread_id="t2"),
                    message=spb.MessageInput(text="wake me"),
                )
            )
            assert reply.decision.WhichOneof("action") == "wake"
        first.proc.send_signal(signal.SIGKILL)  # the run holds mid-reply: nothing saved it yet
        first.proc.wait(timeout=10)
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
    release.touch()

    second = serving(cfg, tmp_path / "b")
    try:
        found = await until(lambda: survivors(second.addr, "t2", "wake me"), step=0.1, what="the replayed run's answer")
        assert len(found) == 1
        async with grpc.aio.insecure_channel(second.addr) as channel:
            listed = await thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
                tpb.ListMessagesRequest(thread_id="t2")
            )
        assert [p.text.text for m in listed.messages if m.role == 2 for p in m.parts] == ["good morning"]
    finally:
        assert second.stop() == 0

    third = serving(cfg, tmp_path / "c")  # replayed once: a clean restart replays nothing
    try:
        await asyncio.sleep(0.5)
        assert len(await survivors(third.addr, "t2", "wake me")) == 1
    finally:
        assert third.stop() == 0
