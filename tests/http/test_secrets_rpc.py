"""No secret leaves agentd: a provider that quotes the API key back in its 401
body, over gRPC, with tracing on and every log record kept; the key appears in
no error the caller sees, no stream chunk, no log record and no span."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentd.runtime import Agent
from agentd.runtime.redact import REDACTED, install_log_redaction, redact
from agentd_proto.v1 import agent_service_pb2 as apb
from fakes.base import ErrorReply
from fakes.openai_server import FakeOpenAIServer, error_body
from support.server import Running, start_server

KEY = "sk-live-4f9c2b7e1d8a6039c5e7b2a14d6f8e03"


@pytest.fixture
async def leaky(
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[Running, FakeOpenAIServer, InMemorySpanExporter]]:
    async with FakeOpenAIServer() as fake:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        running = await start_server([Agent(id="gpt", model="openai/gpt-test")], tracer_provider=provider)
        try:
            yield running, fake, exporter
        finally:
            await running.channel.close()
            await running.server.stop(0)


def leaked_401() -> ErrorReply:
    body = error_body(
        f"Incorrect API key provided: Bearer {KEY}. You can find your key at ...", "invalid_request_error"
    )
    return ErrorReply(401, body)


async def test_a_key_quoted_by_the_provider_reaches_no_caller_log_or_span(
    leaky: tuple[Running, FakeOpenAIServer, InMemorySpanExporter], caplog: pytest.LogCaptureFixture
) -> None:
    running, fake, exporter = leaky
    install_log_redaction()
    caplog.set_level(logging.DEBUG)
    fake.push(leaked_401(), leaked_401())
    with pytest.raises(grpc.aio.AioRpcError) as generate:
        await running.agents.Generate(apb.GenerateRequest(agent_id="gpt", text="hi"))
    seen: list[str] = [generate.value.details() or "", repr(generate.value.trailing_metadata())]
    async for message in running.agents.Stream(apb.StreamRequest(agent_id="gpt", text="hi")):
        seen.append(str(message))
    assert any("Incorrect API key" in s for s in seen)  # the provider's words do arrive
    seen += [caplog.text, *(r.getMessage() for r in caplog.records)]
    for span in exporter.get_finished_spans():
        seen.append(json.dumps(span.to_json()))
    leaks = [s for s in seen if KEY in s]
    assert leaks == []
    assert any(REDACTED in s for s in seen)


def test_known_secrets_and_key_shapes_are_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-0123456789abcdef")
    import agentd.runtime.redact as module

    monkeypatch.setattr(module, "_scanned", False)
    text = (
        "a=tok-0123456789abcdef b=sk-ant-api03-abcdefghijklmnop "
        "c=AIzaSyA1234567890abcdefghijklmnopqrstu d=Bearer abc.def.ghi"
    )
    out = redact(text)
    assert "tok-0123456789abcdef" not in out and "sk-ant" not in out and "AIzaSy" not in out and "abc.def" not in out
    assert redact("an ordinary sentence, skipping nothing") == "an ordinary sentence, skipping nothing"


async def test_no_secret_of_a_whole_scenario_appears_in_logs_spans_errors_or_agent_definitions(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Any
) -> None:
    """Known secrets everywhere agentd holds them: a bearer token, a JWT
    secret, a provider key (quoted back by the provider), a key in an agent's
    metadata, the TLS private key. A scenario of good and bad calls,
    then every log record, every span, every error and the agent answers are
    grepped for each."""
    from agentd.grpc.auth import Authenticator, Credential, JWTSettings, hash_token, identity
    from agentd.grpc.gate import Gate
    from agentd.grpc.tls import TLSSettings
    from agentd_proto.v1 import agent_service_pb2_grpc
    from support.certs import CertificateAuthority

    token, jwt_secret, option_key = (
        "agentd_scenario-token-5d1e0c9a7b3f",
        "jwt-secret-9f8e7d6c5b4a",
        "sk-opt-77aa88bb99cc00dd11ee",
    )
    install_log_redaction()
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("SCENARIO_JWT_SECRET", jwt_secret)
    ca = CertificateAuthority.new("scenario CA")
    server_cert = ca.issue("agentd", dns=["localhost"], ips=["127.0.0.1"])
    cert, key = server_cert.write(tmp_path / "server")
    private_key = server_cert.key_pem.decode().splitlines()[1]
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    async with FakeOpenAIServer() as fake:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        fake.push(leaked_401(), leaked_401())
        authenticator = Authenticator(
            ("token", "jwt"),
            tokens=[Credential(hash_token(token), identity("acme", "svc", ["admin"], ["*"], "token", "t"))],
            jwt_settings=JWTSettings(secret_env="SCENARIO_JWT_SECRET"),
        )
        agents = [
            Agent(id="gpt", model="openai/gpt-test"),
            Agent(id="keyed", metadata={"x": {"apiKey": option_key}}),  # someone put a key in the metadata
        ]
        running = await start_server(
            agents, tracer_provider=provider, gate=Gate(authenticator), tls=TLSSettings(str(cert), str(key))
        )
        seen: list[str] = []
        try:
            async with grpc.aio.secure_channel(running.addr, grpc.ssl_channel_credentials(ca.pem)) as channel:
                stub = agent_service_pb2_grpc.AgentServiceStub(channel)
                good = (("authorization", f"Bearer {token}"),)
                seen.append(str(await stub.GetAgent(apb.GetAgentRequest(agent_id="keyed"), metadata=good)))
                seen.append(str(await stub.ListAgents(apb.ListAgentsRequest(), metadata=good)))
                for metadata in (
                    good,
                    (("authorization", f"Bearer {token}x"),),
                    (("authorization", f"Bearer {jwt_secret}"),),
                ):
                    try:
                        await stub.Generate(apb.GenerateRequest(agent_id="gpt", text="hi"), metadata=metadata)
                    except grpc.aio.AioRpcError as err:
                        seen += [err.details() or "", repr(err.trailing_metadata())]
        finally:
            await running.close()
    seen += [caplog.text, *(r.getMessage() for r in caplog.records)]
    seen += [json.dumps(span.to_json()) for span in exporter.get_finished_spans()]
    for secret in (token, jwt_secret, option_key, KEY, private_key):
        leaks = [s for s in seen if secret in s]
        assert leaks == [], f"{secret[:12]}... leaked"
