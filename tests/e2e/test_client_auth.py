"""The Python client against servers that authenticate their callers: a
bearer token (or `$AGENTD_TOKEN`) over TLS, a JWT, mutual TLS, a token over
plaintext to loopback; and the typed errors of each refusal, with their
ErrorInfo reason (and RetryInfo delay). Every server is `agentd serve` on
the conformance config, its certificates made in the test."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import jwt
import pytest
from agentd_client import (
    TLS,
    AgentdClient,
    AgentdError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
    chunk_kind,
)
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from .secure import (
    CLIENT_SUBJECT,
    CONFORMANCE_DIR,
    Caller,
    Pki,
    make_pki,
    new_caller,
    secure_config,
    start_secure_server,
)
from .serverproc import REPO_ROOT, ServerProcess

APP_ARGS = ["--app", "tests.conformance.app"]
JWT_SECRET_ENV = "AGENTD_TEST_JWT_SECRET"
JWT_SECRET = uuid.uuid4().hex * 2
TIMEOUT_S = 20.0


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def callers() -> dict[str, Caller]:
    return {
        "writer": new_caller("acme", "billing", ["writer", "admin"]),
        "reader": new_caller("acme", "dashboard", ["reader"]),
        "rival": new_caller("globex", "billing", ["writer", "admin"]),
        "burst": new_caller("acme", "burst", ["reader"]),
        "streamer": new_caller("acme", "streamer", ["reader"]),
    }


def _serve(folder: Path, pki: Pki, callers: list[Caller], **config: object) -> Iterator[ServerProcess]:
    base = (CONFORMANCE_DIR / "agentd.toml").read_text(encoding="utf-8")
    path = secure_config(base, folder / "agentd.toml", pki, callers, **config)  # type: ignore[arg-type]
    server = start_secure_server(
        path,
        pki,
        extra_args=APP_ARGS,
        log_dir=folder,
        client_cert=bool(config.get("require_client_cert")),
        env={JWT_SECRET_ENV: JWT_SECRET},
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def tls_server(
    tmp_path_factory: pytest.TempPathFactory, pki: Pki, callers: dict[str, Caller]
) -> Iterator[ServerProcess]:
    """Tokens and HS256 JWTs, over TLS."""
    jwt_table = f'[auth.jwt]\nsecret_env = "{JWT_SECRET_ENV}"\nissuer = "tests"'
    yield from _serve(
        tmp_path_factory.mktemp("tls"),
        pki,
        [callers["writer"], callers["reader"], callers["rival"]],
        modes=("token", "jwt"),
        auth=[jwt_table],
    )


@pytest.fixture(scope="module")
def limits_server(
    tmp_path_factory: pytest.TempPathFactory, pki: Pki, callers: dict[str, Caller]
) -> Iterator[ServerProcess]:
    limits = "[auth.limits]\nrequests_per_second = 0.5\nburst = 2\nmax_streams = 1"
    yield from _serve(tmp_path_factory.mktemp("limits"), pki, [callers["burst"], callers["streamer"]], auth=[limits])


@pytest.fixture(scope="module")
def mtls_server(
    tmp_path_factory: pytest.TempPathFactory, pki: Pki, callers: dict[str, Caller]
) -> Iterator[ServerProcess]:
    certificate = f'[[auth.certificates]]\nsubject = "{CLIENT_SUBJECT}"\ntenant = "acme"\nroles = ["reader"]'
    yield from _serve(
        tmp_path_factory.mktemp("mtls"),
        pki,
        [callers["writer"]],
        modes=("token", "mtls"),
        require_client_cert=True,
        auth=[certificate],
    )


def tls(pki: Pki, *, client_cert: bool = False) -> TLS:
    if client_cert:
        return TLS(ca_file=pki.ca, cert_file=pki.client_cert, key_file=pki.client_key)
    return TLS(ca_file=pki.ca)


@pytest.fixture
async def writer(tls_server: ServerProcess, pki: Pki, callers: dict[str, Caller]) -> AsyncIterator[AgentdClient]:
    async with AgentdClient(tls_server.addr, token=callers["writer"].token, tls=tls(pki), timeout=TIMEOUT_S) as c:
        yield c


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


async def test_a_token_over_tls_reaches_every_service(writer: AgentdClient) -> None:
    assert (await writer.generate("echo", "hello over tls")).text == "hello over tls"
    kinds = [chunk_kind(c) async for c in writer.stream("echo", "one two")]
    assert kinds[0] == "start" and kinds[-1] == "finish"
    resource, thread = fresh("res"), fresh("thread")
    async with writer.subscribe(thread, resource_id=resource) as sub:
        routing = await writer.send_message("chat", "remember", thread_id=thread, resource_id=resource)
        assert routing.action == "wake"
        async for chunk in sub:
            if chunk_kind(chunk) == "finish":
                break
    assert (await writer.get_thread(thread, resource_id=resource)).thread.id == thread
    await writer.get_cache_stats()  # admin


async def test_refusals_are_typed_errors_with_their_reason(
    tls_server: ServerProcess, pki: Pki, callers: dict[str, Caller]
) -> None:
    async with AgentdClient(tls_server.addr, token="", tls=tls(pki), timeout=TIMEOUT_S) as anonymous:
        with pytest.raises(UnauthenticatedError) as missing:
            await anonymous.list_agents()
        with pytest.raises(UnauthenticatedError) as stream_missing:
            await anonymous.stream("echo", "x").collect()
    assert (missing.value.code, missing.value.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING")
    assert stream_missing.value.reason == "TOKEN_MISSING"
    assert isinstance(missing.value, AgentdError)

    async with AgentdClient(tls_server.addr, token="agentd_not-a-token", tls=tls(pki)) as stranger:
        with pytest.raises(UnauthenticatedError) as invalid:
            await stranger.get_agent("echo")
    assert invalid.value.reason == "TOKEN_INVALID" and "agentd_not-a-token" not in str(invalid.value)

    async with AgentdClient(tls_server.addr, token=callers["reader"].token, tls=tls(pki)) as reader:
        assert {a.id for a in await reader.list_agents()} >= {"echo", "chat"}  # reading is allowed
        with pytest.raises(PermissionDeniedError) as weak:
            await reader.generate("echo", "x")
        with pytest.raises(PermissionDeniedError):
            await reader.get_cache_stats()
    assert (weak.value.code_name, weak.value.reason) == ("PERMISSION_DENIED", "ROLE_REQUIRED")
    assert weak.value.metadata["required_role"] == "writer"


async def test_the_token_comes_from_agentd_token_when_none_is_given(
    tls_server: ServerProcess, pki: Pki, callers: dict[str, Caller], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTD_TOKEN", callers["writer"].token)
    async with AgentdClient(tls_server.addr, tls=tls(pki), timeout=TIMEOUT_S) as client:
        assert (await client.generate("echo", "from the environment")).text == "from the environment"
    async with AgentdClient(tls_server.addr, token="", tls=tls(pki), timeout=TIMEOUT_S) as client:
        with pytest.raises(UnauthenticatedError):  # token="" reads nothing
            await client.list_agents()


async def test_another_tenants_thread_is_not_found(
    writer: AgentdClient, tls_server: ServerProcess, pki: Pki, callers: dict[str, Caller]
) -> None:
    resource, thread = fresh("res"), fresh("thread")
    await writer.create_thread(resource, thread_id=thread)
    async with AgentdClient(tls_server.addr, token=callers["rival"].token, tls=tls(pki), timeout=TIMEOUT_S) as rival:
        with pytest.raises(AgentdError) as caught:
            await rival.get_thread(thread, resource_id=resource)
        assert caught.value.code_name == "NOT_FOUND"
        # Ids are per tenant: the rival may create the same thread id for itself.
        assert (await rival.create_thread(resource, thread_id=thread)).id == thread


async def test_a_jwt_is_a_bearer_token_and_an_expired_one_says_so(tls_server: ServerProcess, pki: Pki) -> None:
    def token(expires_in: float) -> str:
        claims = {
            "iss": "tests",
            "sub": "jwt-user",
            "tenant": "acme",
            "roles": ["writer"],
            "exp": time.time() + expires_in,
        }
        return jwt.encode(claims, JWT_SECRET, algorithm="HS256")

    async with AgentdClient(tls_server.addr, token=token(300), tls=tls(pki), timeout=TIMEOUT_S) as client:
        assert (await client.generate("echo", "signed")).text == "signed"
    async with AgentdClient(tls_server.addr, token=token(-3600), tls=tls(pki), timeout=TIMEOUT_S) as client:
        with pytest.raises(UnauthenticatedError) as caught:
            await client.list_agents()
    assert caught.value.reason == "TOKEN_EXPIRED"


async def test_limits_are_resource_exhausted_with_a_retry_delay(
    limits_server: ServerProcess, pki: Pki, callers: dict[str, Caller]
) -> None:
    async with AgentdClient(limits_server.addr, token=callers["burst"].token, tls=tls(pki), timeout=TIMEOUT_S) as c:
        with pytest.raises(ResourceExhaustedError) as caught:
            for _ in range(5):  # a burst of 2 at one every two seconds
                await c.get_agent("echo")
    assert caught.value.reason == "RATE_LIMITED"
    assert caught.value.retry_delay is not None and 0 < caught.value.retry_delay <= 2.5

    token = callers["streamer"].token
    async with AgentdClient(limits_server.addr, token=token, tls=tls(pki), timeout=TIMEOUT_S) as c:
        resource, thread = fresh("res"), fresh("thread")
        async with c.subscribe(thread, resource_id=resource, reconnect=False):
            with pytest.raises(ResourceExhaustedError) as second:
                async with c.subscribe(thread, resource_id=resource, reconnect=False):
                    pass
    assert second.value.reason == "TOO_MANY_STREAMS"


async def test_mutual_tls_names_the_caller_by_its_certificate(
    mtls_server: ServerProcess, pki: Pki, callers: dict[str, Caller]
) -> None:
    async with AgentdClient(mtls_server.addr, token="", tls=tls(pki, client_cert=True), timeout=TIMEOUT_S) as c:
        assert {a.id for a in await c.list_agents()} >= {"echo"}
        with pytest.raises(PermissionDeniedError):  # the certificate's identity is a reader
            await c.generate("echo", "x")
    # A token still wins over the certificate it rides with.
    token = callers["writer"].token
    async with AgentdClient(mtls_server.addr, token=token, tls=tls(pki, client_cert=True), timeout=TIMEOUT_S) as c:
        assert (await c.generate("echo", "both")).text == "both"
    async with AgentdClient(mtls_server.addr, token=token, tls=tls(pki), timeout=5) as c:
        with pytest.raises(AgentdError) as caught:  # no client certificate: the handshake fails
            await c.list_agents()
    assert caught.value.code_name == "UNAVAILABLE"


def test_health_is_open_without_credentials(tls_server: ServerProcess, pki: Pki) -> None:
    with grpc.secure_channel(tls_server.addr, pki.credentials()) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT_S)
    assert answer.status == health_pb2.HealthCheckResponse.SERVING


async def test_a_token_over_plaintext_is_sent_to_loopback_only(
    tmp_path: Path, pki: Pki, callers: dict[str, Caller]
) -> None:
    base = (CONFORMANCE_DIR / "agentd.toml").read_text(encoding="utf-8")
    path = tmp_path / "agentd.toml"
    path.write_text(f'{base}\n[auth]\nmode = "token"\n\n{callers["writer"].toml}\n', encoding="utf-8")
    server = start_secure_server(path, pki, extra_args=APP_ARGS, log_dir=tmp_path, plaintext=True)
    try:
        async with AgentdClient(server.addr, token=callers["writer"].token, timeout=TIMEOUT_S) as client:
            assert (await client.generate("echo", "plain")).text == "plain"
            resource, thread = fresh("res"), fresh("thread")
            async with client.subscribe(thread, resource_id=resource):  # streams carry it too
                pass
    finally:
        server.stop()
    with pytest.raises(ValueError, match="in clear"):
        AgentdClient("agentd.example.com:50051", token="agentd_x")
    AgentdClient("agentd.example.com:50051", token="agentd_x", allow_insecure_token=True)
    with pytest.raises(ValueError, match="not both"):
        AgentdClient(token="agentd_x", metadata={"authorization": "Bearer agentd_y"})


def test_tls_takes_a_certificate_with_its_key() -> None:
    with pytest.raises(ValueError, match="together"):
        TLS(ca_file="ca.pem", cert_file="client.pem")
    with pytest.raises(FileNotFoundError):
        AgentdClient("127.0.0.1:1", tls=TLS(ca_file="/no/such/ca.pem"))


def test_errors_carry_the_retry_delay_and_their_class() -> None:
    info, retry = any_pb2.Any(), any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason="RATE_LIMITED", domain="agentd"))
    retry.Pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(seconds=1, nanos=500_000_000)))
    err = AgentdError.from_status(status_pb2.Status(code=8, message="slow down", details=[info, retry]))
    assert isinstance(err, ResourceExhaustedError) and (err.reason, err.retry_delay) == ("RATE_LIMITED", 1.5)
    assert isinstance(AgentdError.from_status(status_pb2.Status(code=16, message="who")), UnauthenticatedError)
    assert isinstance(AgentdError.from_status(status_pb2.Status(code=7, message="no")), PermissionDeniedError)
    plain = AgentdError.from_status(status_pb2.Status(code=5, message="gone"))
    assert type(plain) is AgentdError and plain.retry_delay is None


def test_the_secure_example_runs_with_a_token_and_with_a_certificate(
    tls_server: ServerProcess, mtls_server: ServerProcess, pki: Pki, callers: dict[str, Caller]
) -> None:
    example = [sys.executable, str(REPO_ROOT / "clients" / "python" / "examples" / "secure_example.py")]
    env = {k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"}
    token = [*example, "--addr", tls_server.addr, "--cacert", str(pki.ca), "--token", callers["writer"].token]
    done = subprocess.run(token, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert (done.returncode, done.stdout) == (0, "hello, securely\n"), done.stderr
    anonymous = subprocess.run(token[:-2], capture_output=True, text=True, timeout=60, env=env, check=False)
    assert anonymous.returncode == 1 and "TOKEN_MISSING" in anonymous.stdout, anonymous.stderr
    cert = ["--cert", str(pki.client_cert), "--key", str(pki.client_key), "--agent", "echo"]
    mutual = [*example, "--addr", mtls_server.addr, "--cacert", str(pki.ca), *cert]
    done = subprocess.run(mutual, capture_output=True, text=True, timeout=60, env=env, check=False)
    assert done.returncode == 1 and "needs the writer role" in done.stdout, done.stderr  # the certificate is a reader


async def test_new_certificate_files_serve_new_connections_without_a_restart(
    tmp_path: Path, callers: dict[str, Caller]
) -> None:
    first = make_pki(tmp_path / "first")
    base = (CONFORMANCE_DIR / "agentd.toml").read_text(encoding="utf-8")
    config = secure_config(base, tmp_path / "agentd.toml", first, [callers["writer"]])
    server = start_secure_server(config, first, extra_args=APP_ARGS, log_dir=tmp_path)
    token = callers["writer"].token
    try:
        second = make_pki(tmp_path / "second")  # another CA: only its clients trust the new certificate
        for new, old in ((second.server_key, first.server_key), (second.server_cert, first.server_cert)):
            staged = old.with_suffix(".new")
            staged.write_bytes(new.read_bytes())
            staged.replace(old)
        async with AgentdClient(server.addr, token=token, tls=tls(second), timeout=TIMEOUT_S) as client:
            assert (await client.generate("echo", "renewed")).text == "renewed"
        async with AgentdClient(server.addr, token=token, tls=tls(first), timeout=5) as client:
            with pytest.raises(AgentdError) as caught:  # the old CA no longer vouches for the server
                await client.list_agents()
        assert caught.value.code_name == "UNAVAILABLE"
        assert server.proc.poll() is None
    finally:
        server.stop()
