"""A `rediss://` URL: storage, the server cache and coordination talk TLS to a
real TLS-only redis-server; one whose certificate agentd does not trust stops
start-up with the reason, never falls back to plaintext."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest
from google.protobuf import struct_pb2
from redis.asyncio import Redis

from agentd import config
from agentd.grpc.server import AgentdServer
from agentd.runtime import App, Host
from agentd.runtime.errors import Unavailable
from agentd.runtime.storage import StorageError
from agentd_proto.v1 import cache_service_pb2 as cpb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from redis_server import RedisServer, RedisTls
from support.certs import CertificateAuthority
from support.polling import until
from support.server import Running


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    folder = tmp_path_factory.mktemp("redis-tls")
    ca = CertificateAuthority.new("redis test CA")
    cert, key = ca.issue("localhost", dns=["localhost"], ips=["127.0.0.1"]).write(folder / "redis")
    server = RedisServer.start_new(tls=RedisTls(cert, key, ca.write(folder / "ca.pem")))
    try:
        yield server
    finally:
        server.close()


def trusted_url(server: RedisServer) -> str:
    assert server.tls is not None
    return f"{server.url}?ssl_ca_certs={server.tls.ca}"


@asynccontextmanager
async def agentd_on(url: str, folder: Path, *, coordination: bool = True) -> AsyncIterator[Running]:
    (folder / "agentd.toml").write_text(
        f"""
[storage]
backend = "redis"
redis_url = "{url}"

[cache]
backend = "redis"
redis_url = "{url}"

{"[coordination]" if coordination else ""}
{'backend = "redis"' if coordination else ""}

[[agents]]
id = "chat"
model = "local/echo"
memory = {{ last_messages = 10 }}
""",
        encoding="utf-8",
    )
    cfg = config.load(folder / "agentd.toml", env={})
    server = AgentdServer(Host.from_config(cfg, App()), dispatch_interval=0)
    port = await server.start("127.0.0.1:0")
    running = Running(server, f"127.0.0.1:{port}", grpc.aio.insecure_channel(f"127.0.0.1:{port}"))
    try:
        yield running
    finally:
        await running.close()


def message(thread_id: str, text: str) -> sspb.SendMessageRequest:
    return sspb.SendMessageRequest(
        agent_id="chat",
        target=spb.SignalTarget(resource_id="u1", thread_id=thread_id),
        message=spb.MessageInput(text=text),
    )


async def test_threads_and_the_cache_are_kept_on_a_tls_redis(tls_redis: RedisServer, tmp_path: Path) -> None:
    url = trusted_url(tls_redis)
    async with agentd_on(url, tmp_path) as running:
        await running.signals.SendMessage(message("tls-thread", "hello over tls"))

        async def stored() -> list[str]:
            request = tpb.ListMessagesRequest(thread_id="tls-thread", resource_id="u1")
            reply = await running.threads.ListMessages(request)
            return [p.WhichOneof("part") or "" for m in reply.messages for p in m.parts]

        kept = await until(stored, holds=lambda got: len(got) == 2, within=30, what="the message and its echo")
        assert kept == ["signal", "text"]
        value = struct_pb2.Value(string_value="kept")
        await running.cache.SetCacheEntry(cpb.SetCacheEntryRequest(key="k", value=value))
        got = await running.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key="k"))
        assert got.found and got.value.string_value == "kept"
    # What agentd acknowledged is in that Redis, read back over TLS by another client.
    redis = Redis.from_url(url)
    try:
        keys = [key.decode() for key in await redis.keys("*")]
    finally:
        await redis.aclose()
    assert any("tls-thread" in key for key in keys)


@pytest.mark.parametrize("coordination", [False, True])
async def test_a_redis_certificate_agentd_does_not_trust_stops_start_up_naming_why(
    tls_redis: RedisServer, tmp_path: Path, coordination: bool
) -> None:
    """No plaintext fallback and no server that looks healthy: start-up refuses,
    as for a Redis that cannot be reached, with the TLS failure in the error."""
    stranger = CertificateAuthority.new("not the redis CA").write(tmp_path / "other-ca.pem")
    with pytest.raises((StorageError, Unavailable), match="CERTIFICATE_VERIFY_FAILED"):
        async with agentd_on(f"{tls_redis.url}?ssl_ca_certs={stranger}", tmp_path, coordination=coordination):
            pass


async def test_a_client_certificate_named_in_the_url_is_presented_to_a_redis_that_requires_one(
    tmp_path: Path,
) -> None:
    ca = CertificateAuthority.new("redis mTLS CA")
    cert, key = ca.issue("localhost", dns=["localhost"], ips=["127.0.0.1"]).write(tmp_path / "redis")
    client = ca.issue("agentd", client=True).write(tmp_path / "agentd")
    server = RedisServer.start_new(tls=RedisTls(cert, key, ca.write(tmp_path / "ca.pem"), client=client))
    try:
        assert server.tls is not None
        url = f"{server.url}?ssl_ca_certs={server.tls.ca}"
        with pytest.raises((StorageError, Unavailable)):  # no certificate: the server hangs up
            async with agentd_on(url, tmp_path, coordination=False):
                pass
        mutual = f"{url}&ssl_certfile={client[0]}&ssl_keyfile={client[1]}"
        async with agentd_on(mutual, tmp_path) as running:
            value = struct_pb2.Value(string_value="mutual")
            await running.cache.SetCacheEntry(cpb.SetCacheEntryRequest(key="m", value=value))
            got = await running.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key="m"))
            assert got.found and got.value.string_value == "mutual"
            await running.signals.SendMessage(message("mtls-thread", "hello"))
    finally:
        server.close()
