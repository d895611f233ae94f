"""Authentication as an operator deploys it: no authentication beyond loopback
is refused at start-up; a rate limit per identity is shared by two replicas
(the bucket lives in the shared Redis cache); Redis reached with an ACL user
and password, which no log line shows."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from agentd.grpc.auth import hash_token
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.polling import until_sync

from .serverproc import DEFAULT_CONFIG, free_port, own_sqlite, start_server

TOKEN = "agentd_e2e-writer-token-0123456789abcdef"
PASSWORD = "s3cret-redis-passw0rd-4f9c"

AUTH = f"""
[auth]
mode = "token"

[[auth.tokens]]
sha256 = "{hash_token(TOKEN)}"
tenant = "acme"
subject = "e2e"
roles = ["admin"]
"""


def with_auth(tmp_path: Path, extra: str) -> Path:
    """A config of its own: `extra` tables, an SQLite file under `tmp_path` unless
    `extra` sets [storage], and one echo agent."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    storage = "" if "[storage]" in extra else f'[storage]\npath = "{tmp_path / "agentd.db"}"\n'
    config = tmp_path / "agentd.toml"
    config.write_text(f'{extra}\n{storage}\n[[agents]]\nid = "echo"\nmodel = "local/echo"\n')
    return config


def test_no_authentication_beyond_loopback_is_refused_unless_allowed(tmp_path: Path) -> None:
    refused = start_server(["--host", "0.0.0.0"], config=own_sqlite(DEFAULT_CONFIG, tmp_path))
    assert refused.proc.wait(timeout=30) == 2
    log = refused.log_text()
    assert "auth.mode" in log and "allow_unauthenticated_network" in log, log
    allowed = start_server(
        ["--host", "0.0.0.0"], config=with_auth(tmp_path, "[auth]\nallow_unauthenticated_network = true\n")
    )
    try:
        allowed.wait_serving(timeout=30)
        assert "AUTHENTICATION IS OFF" in allowed.log_text()
    finally:
        allowed.stop()


@pytest.fixture
def acl_redis(tmp_path: Path) -> Iterator[str]:
    """A redis-server that admits only user `agentd` with a password (and no default user)."""
    binary = shutil.which("redis-server")
    assert binary is not None, "install Debian package redis-server"
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
            "--requirepass",
            "unused-default-password",
            "--user",
            "default",
            "off",
            "--user",
            "agentd",
            "on",
            f">{PASSWORD}",
            "~*",
            "&*",
            "+@all",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def ping() -> str:
            probe = subprocess.run(
                ["redis-cli", "-p", str(port), "--user", "agentd", "--pass", PASSWORD, "--no-auth-warning", "ping"],
                capture_output=True,
                text=True,
            )
            return probe.stdout.strip()

        until_sync(ping, holds=lambda reply: reply == "PONG", what="redis-server to answer the agentd user")
        yield f"redis://agentd:{PASSWORD}@127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def generate(addr: str) -> apb.GenerateResponse:
    async with grpc.aio.insecure_channel(addr) as channel:
        reply: apb.GenerateResponse = await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
            apb.GenerateRequest(agent_id="echo", text="hi"),
            metadata=(("authorization", f"Bearer {TOKEN}"),),
            timeout=10,
        )
        return reply


async def test_a_rate_limit_per_identity_is_shared_by_two_replicas(tmp_path: Path, acl_redis: str) -> None:
    limits = AUTH + "\n[auth.limits]\nrequests_per_second = 0.2\nburst = 3\n"
    cache = f'[cache]\nbackend = "redis"\nredis_url = "{acl_redis}"\nkey_prefix = "rate-{tmp_path.name}:"\n'
    servers = [start_server(config=with_auth(tmp_path / name, limits + cache)) for name in ("a", "b")]
    try:
        for server in servers:
            server.wait_serving(timeout=30)
        for i in range(3):  # the burst, spread over both replicas
            assert (await generate(servers[i % 2].addr)).text == "hi"
        for server in servers:  # the bucket is empty on both: it is one bucket
            with pytest.raises(grpc.aio.AioRpcError) as limited:
                await generate(server.addr)
            refused = rich_error(limited.value)
            assert (refused.code, refused.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
            assert refused.retry_delay is not None and 0 < refused.retry_delay <= 5.0
    finally:
        for server in servers:
            server.stop()


async def test_redis_with_an_acl_user_and_password_keeps_threads_and_never_logs_the_password(
    tmp_path: Path, acl_redis: str
) -> None:
    storage = f'[storage]\nbackend = "redis"\nredis_url = "{acl_redis}"\nkey_prefix = "acl-{tmp_path.name}:"\n'
    server = start_server(config=with_auth(tmp_path, AUTH + storage))
    try:
        server.wait_serving(timeout=30)
        metadata = (("authorization", f"Bearer {TOKEN}"),)
        async with grpc.aio.insecure_channel(server.addr) as channel:
            threads = thread_service_pb2_grpc.ThreadServiceStub(channel)
            await threads.CreateThread(
                tpb.CreateThreadRequest(thread=tpb.Thread(id="t1", resource_id="u1")), metadata=metadata
            )
            got = await threads.GetThread(tpb.GetThreadRequest(thread_id="t1"), metadata=metadata)
            assert got.thread.resource_id == "u1"
    finally:
        server.stop()
    wrong = start_server(config=with_auth(tmp_path / "wrong", AUTH + storage.replace(PASSWORD, PASSWORD + "-not-it")))
    assert wrong.proc.wait(timeout=30) == 1
    log = wrong.log_text()
    assert "cannot start" in log
    for text in (server.log_text(), log):
        assert PASSWORD not in text
    await asyncio.sleep(0)
