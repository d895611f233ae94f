"""TLS and mutual TLS with certificates made in the test: a token over TLS, a
client certificate as the identity, an unknown or foreign certificate
refused, and a certificate rotated on disk served without a restart."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from agentd.grpc.auth import Authenticator, Credential, hash_token, identity
from agentd.grpc.gate import Gate
from agentd.grpc.tls import TLSSettings
from agentd.runtime import Agent
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from support.certs import CertificateAuthority, Issued
from support.polling import until
from support.server import Running, start_server

TOKEN = "agentd_tls-test-token-0123456789abcdef"


def server_cert(ca: CertificateAuthority) -> Issued:
    return ca.issue("agentd", dns=["localhost"], ips=["127.0.0.1"])


async def generate(addr: str, credentials: grpc.ChannelCredentials, metadata: tuple[tuple[str, str], ...] = ()) -> str:
    async with grpc.aio.secure_channel(addr, credentials) as channel:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        reply = await stub.Generate(apb.GenerateRequest(agent_id="echo", text="over tls"), metadata=metadata, timeout=5)
        return reply.text


async def start(tmp_path: Path, tls: TLSSettings, authenticator: Authenticator) -> Running:
    return await start_server([Agent(id="echo")], tls=tls, gate=Gate(authenticator))


async def test_a_token_over_tls(tmp_path: Path) -> None:
    ca = CertificateAuthority.new("agentd test CA")
    cert, key = server_cert(ca).write(tmp_path / "server")
    authenticator = Authenticator(
        ("token",), tokens=[Credential(hash_token(TOKEN), identity("acme", "svc", ["writer"], ["*"], "token", "t"))]
    )
    running = await start(tmp_path, TLSSettings(str(cert), str(key)), authenticator)
    try:
        trusted = grpc.ssl_channel_credentials(ca.pem)
        assert await generate(running.addr, trusted, (("authorization", f"Bearer {TOKEN}"),)) == "over tls"
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await generate(running.addr, trusted)
        assert missing.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.aio.AioRpcError) as plaintext:  # a plaintext caller never gets through
            async with grpc.aio.insecure_channel(running.addr) as channel:
                await agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                    apb.GenerateRequest(agent_id="echo", text="x"), timeout=3
                )
        assert plaintext.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await running.server.stop(0)


async def test_mutual_tls_names_the_caller_by_its_certificate(tmp_path: Path) -> None:
    ca, stranger_ca = CertificateAuthority.new("agentd test CA"), CertificateAuthority.new("someone else")
    cert, key = server_cert(ca).write(tmp_path / "server")
    known = ca.issue("billing", uris=["spiffe://acme/billing"], client=True)
    unknown = ca.issue("intruder", uris=["spiffe://acme/intruder"], client=True)
    foreign = stranger_ca.issue("billing", uris=["spiffe://acme/billing"], client=True)
    authenticator = Authenticator(
        ("mtls",),
        certificates=[
            Credential(
                "spiffe://acme/billing", identity("acme", "spiffe://acme/billing", ["writer"], ["*"], "mtls", "t")
            )
        ],
    )
    tls = TLSSettings(str(cert), str(key), str(ca.write(tmp_path / "ca.pem")), require_client_cert=True)
    running = await start(tmp_path, tls, authenticator)
    try:

        def as_client(issued: Issued | None) -> grpc.ChannelCredentials:
            if issued is None:
                return grpc.ssl_channel_credentials(ca.pem)
            return grpc.ssl_channel_credentials(ca.pem, issued.key_pem, issued.cert_pem)

        assert await generate(running.addr, as_client(known)) == "over tls"
        with pytest.raises(grpc.aio.AioRpcError) as unknown_cert:
            await generate(running.addr, as_client(unknown))
        assert unknown_cert.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "certificate" in (unknown_cert.value.details() or "")
        for refused in (foreign, None):  # not signed by the CA, or no certificate: no handshake at all
            with pytest.raises(grpc.aio.AioRpcError) as handshake:
                await generate(running.addr, as_client(refused))
            assert handshake.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await running.server.stop(0)


async def test_a_certificate_rotated_on_disk_is_served_without_a_restart(tmp_path: Path) -> None:
    old_ca, new_ca = CertificateAuthority.new("old CA"), CertificateAuthority.new("new CA")
    cert, key = server_cert(old_ca).write(tmp_path / "server")
    authenticator = Authenticator(
        ("token",), tokens=[Credential(hash_token(TOKEN), identity("acme", "svc", ["writer"], ["*"], "token", "t"))]
    )
    running = await start(tmp_path, TLSSettings(str(cert), str(key)), authenticator)
    metadata = (("authorization", f"Bearer {TOKEN}"),)
    try:
        assert await generate(running.addr, grpc.ssl_channel_credentials(old_ca.pem), metadata) == "over tls"
        with pytest.raises(grpc.aio.AioRpcError):
            await generate(running.addr, grpc.ssl_channel_credentials(new_ca.pem), metadata)
        rotated = server_cert(new_ca)
        tmp = tmp_path / "rotating"
        rotated.write(tmp)
        (tmp_path / "rotating.pem").replace(cert)
        (tmp_path / "rotating-key.pem").replace(key)

        async def over_the_new_ca() -> str | None:
            try:
                return await generate(running.addr, grpc.ssl_channel_credentials(new_ca.pem), metadata)
            except grpc.aio.AioRpcError:
                return None

        # The next handshake reads the files again.
        text = await until(over_the_new_ca, step=0.1, what="the rotated certificate served")
        assert text == "over tls"
    finally:
        await running.server.stop(0)
