"""Threads outlive processes: SIGKILL and restart on one SQLite file; two
server processes sharing one Redis."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import grpc

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb

from .serverproc import ServerProcess, start_server

CHAT_AGENT = """
[[agents]]
id = "chat"
model = "local/echo"
memory = { last_messages = 10 }
"""


def config(tmp_path: Path, storage: str) -> Path:
    path = tmp_path / "agentd.toml"
    path.write_text(storage + CHAT_AGENT)
    return path


def bound(resource: str = "u1", thread: str = "t1") -> opb.ExecutionOptions:
    return opb.ExecutionOptions(memory=opb.MemoryOptions(resource=resource, thread_id=thread))


def texts(reply: tpb.ListMessagesResponse) -> list[tuple[int, str]]:
    return [(m.role, m.parts[0].text.text) for m in reply.messages]


def serving(cfg: Path, log_dir: Path) -> ServerProcess:
    server = start_server(config=cfg, log_dir=log_dir)
    server.wait_serving(timeout=30)
    return server


async def test_acknowledged_messages_survive_sigkill_on_sqlite(tmp_path: Path) -> None:
    cfg = config(tmp_path, f'[storage]\nbackend = "sqlite"\npath = "{tmp_path / "data" / "agentd.db"}"\n')
    first = serving(cfg, tmp_path / "log1")
    try:
        async with grpc.aio.insecure_channel(first.addr) as channel:
            reply = await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                apb.GenerateRequest(agent_id="chat", text="remember me", options=bound())
            )
            assert reply.text == "remember me"
        first.proc.send_signal(signal.SIGKILL)  # no shutdown: only what was committed survives
        first.proc.wait(timeout=10)
    finally:
        if first.proc.poll() is None:
            first.proc.kill()
    second = serving(cfg, tmp_path / "log2")
    try:
        async with grpc.aio.insecure_channel(second.addr) as channel:
            threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
            listed = await threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1"))
            assert texts(listed) == [(1, "remember me"), (2, "remember me")]
            await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                apb.GenerateRequest(agent_id="chat", text="and this", options=bound())
            )
            assert len((await threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1"))).messages) == 4
    finally:
        assert second.stop() == 0


async def test_two_processes_on_one_redis_see_the_same_threads(tmp_path: Path, redis_server: Any) -> None:
    prefix = f"agentd-e2e:{tmp_path.name}:"
    cfg = config(tmp_path, f'[storage]\nbackend = "redis"\nredis_url = "{redis_server.url}"\nkey_prefix = "{prefix}"\n')
    a, b = serving(cfg, tmp_path / "a"), serving(cfg, tmp_path / "b")
    try:
        async with grpc.aio.insecure_channel(a.addr) as ca, grpc.aio.insecure_channel(b.addr) as cb:
            threads_a, threads_b = (
                thread_service_pb2_grpc.ThreadServiceStub(ca),
                thread_service_pb2_grpc.ThreadServiceStub(cb),
            )
            await threads_a.CreateThread(
                tpb.CreateThreadRequest(thread=tpb.Thread(id="shared", resource_id="u1", title="Shared"))
            )
            got = (await threads_b.GetThread(tpb.GetThreadRequest(thread_id="shared"))).thread
            assert (got.title, got.resource_id) == ("Shared", "u1")
            await agent_service_pb2_grpc.AgentServiceStub(ca).Generate(
                apb.GenerateRequest(agent_id="chat", text="said on A", options=bound(thread="shared"))
            )
            listed = await threads_b.ListMessages(tpb.ListMessagesRequest(thread_id="shared"))
            assert texts(listed) == [(1, "said on A"), (2, "said on A")]
            await agent_service_pb2_grpc.AgentServiceStub(cb).Generate(
                apb.GenerateRequest(agent_id="chat", text="said on B", options=bound(thread="shared"))
            )
            listed = await threads_a.ListMessages(tpb.ListMessagesRequest(thread_id="shared"))
            assert [t for _, t in texts(listed)] == ["said on A", "said on A", "said on B", "said on B"]
    finally:
        assert a.stop() == 0
        assert b.stop() == 0
