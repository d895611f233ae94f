"""Two tenants using the same resource and thread ids never meet: 1,000
randomized calls by either tenant, on SQLite (one process) and on Redis (three
replicas, coordination included), each through a random replica. Everything a
tenant writes carries its name; anything a tenant reads that carries the
other's name is a crossing. There must be none."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from agentd.grpc.auth import hash_token
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import (
    agent_service_pb2_grpc,
    cache_service_pb2_grpc,
    signal_service_pb2_grpc,
    thread_service_pb2_grpc,
)
from agentd_proto.v1 import cache_service_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb

from .serverproc import ServerProcess, start_server

TENANTS = ("acme", "globex")
TOKENS = {t: f"agentd_{t}-crossing-token-0123456789ab" for t in TENANTS}
THREADS = [f"t{i}" for i in range(4)]
RESOURCES = ["u1", "u2"]
ATTEMPTS = 1_000

AUTH = "\n".join(
    f'[[auth.tokens]]\nsha256 = "{hash_token(TOKENS[t])}"\ntenant = "{t}"\nsubject = "{t}-svc"\nroles = ["admin"]\n'
    for t in TENANTS
)
AGENTS = '[[agents]]\nid = "chat"\nmodel = "local/echo"\nmemory = { last_messages = 20 }\n'


def config(path: Path, backend: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[auth]\nmode = "token"\n\n{AUTH}\n{backend}\n{AGENTS}')
    return path


class Caller:
    """One tenant's stubs on one server."""

    def __init__(self, channel: grpc.aio.Channel, tenant: str) -> None:
        self.tenant = tenant
        self.metadata = (("authorization", f"Bearer {TOKENS[tenant]}"),)
        self.agents = agent_service_pb2_grpc.AgentServiceStub(channel)
        self.threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
        self.signals = signal_service_pb2_grpc.SignalServiceStub(channel)
        self.cache = cache_service_pb2_grpc.CacheServiceStub(channel)


async def attempt(rng: random.Random, callers: list[Caller], seen: list[str]) -> None:
    me = rng.choice(callers)
    thread, resource = rng.choice(THREADS), rng.choice(RESOURCES)
    tag = f"{me.tenant}-{uuid.uuid4().hex[:6]}"
    md, timeout = me.metadata, 10
    op = rng.randrange(8)
    try:
        if op == 0:
            await me.threads.CreateThread(
                tpb.CreateThreadRequest(thread=tpb.Thread(id=thread, resource_id=resource, title=tag)),
                metadata=md,
                timeout=timeout,
            )
        elif op == 1:
            options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource=resource, thread_id=thread))
            reply = await me.agents.Generate(
                apb.GenerateRequest(agent_id="chat", text=f"{tag} says hi", options=options),
                metadata=md,
                timeout=timeout,
            )
            seen.append(f"{me.tenant}<-{reply.text}")
        elif op == 2:
            await me.signals.SendMessage(
                sspb.SendMessageRequest(
                    agent_id="chat",
                    target=spb.SignalTarget(resource_id=resource, thread_id=thread),
                    message=spb.MessageInput(text=f"{tag} message"),
                ),
                metadata=md,
                timeout=timeout,
            )
        elif op == 3:
            listed = await me.threads.ListMessages(
                tpb.ListMessagesRequest(thread_id=thread), metadata=md, timeout=timeout
            )
            seen.extend(f"{me.tenant}<-{m}" for m in listed.messages)
        elif op == 4:
            got = await me.threads.GetThread(tpb.GetThreadRequest(thread_id=thread), metadata=md, timeout=timeout)
            seen.append(f"{me.tenant}<-{got.thread.title}")
        elif op == 5:
            threads = await me.threads.ListThreads(
                tpb.ListThreadsRequest(resource_id=resource), metadata=md, timeout=timeout
            )
            seen.extend(f"{me.tenant}<-{t.title}" for t in threads.threads)
        elif op == 6:
            key = f"k-{thread}"
            if rng.random() < 0.5:
                await me.cache.SetCacheEntry(
                    cpb.SetCacheEntryRequest(key=key, value=struct_pb2.Value(string_value=tag)),
                    metadata=md,
                    timeout=timeout,
                )
            else:
                got_entry = await me.cache.GetCacheEntry(
                    cpb.GetCacheEntryRequest(key=key), metadata=md, timeout=timeout
                )
                seen.append(f"{me.tenant}<-{got_entry.value.string_value}")
        else:
            stream = me.threads.Subscribe(
                tpb.SubscribeRequest(resource_id=resource, thread_id=thread), metadata=md, timeout=timeout
            )
            snapshot = (await stream.read()).snapshot
            stream.cancel()
            if snapshot.last_offset:
                replay = me.threads.Subscribe(
                    tpb.SubscribeRequest(
                        resource_id=resource,
                        thread_id=thread,
                        resume=tpb.ResumePoint(log_epoch=snapshot.log_epoch, after_offset=0),
                    ),
                    metadata=md,
                    timeout=timeout,
                )
                try:
                    for _ in range(4):  # a subscription never ends by itself: read what the replay has
                        try:
                            message = await asyncio.wait_for(replay.read(), 1.0)
                        except TimeoutError:
                            break
                        if message is grpc.aio.EOF:
                            break
                        seen.append(f"{me.tenant}<-{message}")
                except grpc.aio.AioRpcError as err:
                    if err.code() != grpc.StatusCode.OUT_OF_RANGE:  # a trimmed point is fine, a crossing is not
                        raise
                finally:
                    replay.cancel()
    except grpc.aio.AioRpcError as err:
        # What random calls on a tenant's own threads may meet: a thread busy, existing, missing,
        # or made under its other resource (THREAD_RESOURCE_MISMATCH). Never anything of the other tenant's.
        allowed = {
            grpc.StatusCode.NOT_FOUND,
            grpc.StatusCode.ALREADY_EXISTS,
            grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.INVALID_ARGUMENT,
        }
        assert "\\x1f" not in (err.details() or "") and "\x1f" not in (err.details() or "")
        assert err.code() in allowed, f"{me.tenant} op {op}: {err.code()} {err.details()}"
        seen.append(f"{me.tenant}<-{err.details()}")


def crossings(seen: list[str]) -> list[str]:
    found = []
    for entry in seen:
        reader, _, text = entry.partition("<-")
        other = next(t for t in TENANTS if t != reader)
        if f"{other}-" in text or f"{other}\x1f" in text:
            found.append(entry)
    return found


async def run_attempts(addrs: list[str], seed: int) -> list[str]:
    rng = random.Random(seed)
    channels = [grpc.aio.insecure_channel(a) for a in addrs]
    try:
        callers = [Caller(ch, t) for ch in channels for t in TENANTS]
        seen: list[str] = []
        for _ in range(ATTEMPTS // 4):  # four at a time: the tenants race on the same ids
            await asyncio.gather(*(attempt(rng, callers, seen) for _ in range(4)))
        return seen
    finally:
        for ch in channels:
            await ch.close()


@pytest.fixture
def sqlite_server(tmp_path: Path) -> Iterator[ServerProcess]:
    server = start_server(config=config(tmp_path / "agentd.toml", f'[storage]\npath = "{tmp_path / "agentd.db"}"\n'))
    try:
        server.wait_serving(timeout=30)
        yield server
    finally:
        server.stop()


async def test_two_tenants_on_sqlite_never_meet(sqlite_server: ServerProcess) -> None:
    seen = await run_attempts([sqlite_server.addr], seed=1)
    assert len(seen) > 300
    assert crossings(seen) == []


async def test_two_tenants_on_three_replicas_never_meet(tmp_path: Path, redis_server: Any) -> None:
    prefix = f"tenants-{uuid.uuid4().hex[:8]}:"
    backend = (
        f'[coordination]\nbackend = "redis"\nredis_url = "{redis_server.url}"\nlease_ttl_ms = 2000\n'
        f'key_prefix = "{prefix}lease:"\ncluster_key_prefix = "{prefix}cluster:"\n'
        f'[storage]\nkey_prefix = "{prefix}store:"\n[cache]\nkey_prefix = "{prefix}cache:"\n'
    )
    cfg = config(tmp_path / "agentd.toml", backend)
    servers = [start_server(config=cfg, log_dir=tmp_path / name) for name in ("a", "b", "c")]
    try:
        for server in servers:
            server.wait_serving(timeout=30)
        seen = await run_attempts([s.addr for s in servers], seed=2)
    finally:
        for server in servers:
            server.stop()
    assert len(seen) > 300
    assert crossings(seen) == []
