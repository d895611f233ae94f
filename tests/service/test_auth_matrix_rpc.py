"""Every RPC of the four services, crossed with every way a caller can be wrong, generated
from the service descriptors: a new RPC is in the matrix without being named.

- no token, a malformed one, an unknown one, an expired JWT, a JWT of the
  wrong audience or issuer: UNAUTHENTICATED with TOKEN_MISSING, TOKEN_INVALID
  or TOKEN_EXPIRED, before anything else is looked at;
- a reader calling a writer (or admin) RPC, a writer calling CacheService:
  PERMISSION_DENIED ROLE_REQUIRED;
- another tenant's thread, run, subscription, resume, notification or cache
  entry: NOT_FOUND, never PERMISSION_DENIED.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import jwt
import pytest
from google.protobuf import message, message_factory, struct_pb2

from agentd.grpc.auth import Authenticator, Credential, JWTSettings, hash_token, identity
from agentd.grpc.authz import ROLES
from agentd.grpc.gate import Gate
from agentd.grpc.server import SERVICES
from agentd.runtime import Agent
from agentd.runtime.cache import InMemoryServerCache
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import cache_service_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.server import Running, start_server

SECRET = "matrix-hs256-secret-0123456789abcdef"
TOKENS = {
    ("acme", "reader"): "agentd_acme-reader-0123456789abcdef",
    ("acme", "writer"): "agentd_acme-writer-0123456789abcdef",
    ("acme", "admin"): "agentd_acme-admin-0123456789abcdefg",
    ("globex", "admin"): "agentd_globex-admin-0123456789abcde",
}
METHODS = [(s, m) for s in SERVICES for m in s.methods]
RANK = {"reader": 0, "writer": 1, "admin": 2}


def jwt_for(**claims: Any) -> str:
    body = {"tenant": "acme", "sub": "svc", "roles": ["admin"], "iss": "https://id.test", "aud": "agentd"}
    body.update(claims)
    body.setdefault("exp", int(time.time()) + 300)
    return jwt.encode(body, SECRET, algorithm="HS256")


@pytest.fixture
async def secured(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Running]:
    monkeypatch.setenv("MATRIX_JWT_SECRET", SECRET)
    tokens = [
        Credential(hash_token(token), identity(tenant, f"{tenant}-{role}", [role], ["*"], "token", "test"))
        for (tenant, role), token in TOKENS.items()
    ]
    authenticator = Authenticator(
        ("token", "jwt"),
        tokens=tokens,
        jwt_settings=JWTSettings(issuer="https://id.test", audience="agentd", secret_env="MATRIX_JWT_SECRET"),
    )
    storage = InMemoryStorage()
    cache = InMemoryServerCache()
    running = await start_server(
        [Agent(id="chat", memory=Memory(storage)), Agent(id="echo")],
        storage=storage,
        caches={"memory": cache},
        gate=Gate(authenticator, cache=cache),
    )
    try:
        yield running
    finally:
        await running.close()


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def call(
    running: Running, service: Any, method: Any, request: message.Message, metadata: Any, *, frames: int = 1
) -> grpc.StatusCode:
    """The call's status (OK when it succeeded), its stream read to the end or for a few messages."""
    path = f"/{service.full_name}/{method.name}"
    decode = message_factory.GetMessageClass(method.output_type).FromString
    encode = type(request).SerializeToString
    ch = running.channel
    try:
        if method.client_streaming:

            async def once() -> AsyncIterator[message.Message]:
                yield request

            stream = ch.stream_stream(path, request_serializer=encode, response_deserializer=decode)(
                once(), metadata=metadata, timeout=3
            )
            async for _ in stream:
                frames -= 1
                if frames <= 0:
                    stream.cancel()
                    return grpc.StatusCode.OK
        elif method.server_streaming:
            stream = ch.unary_stream(path, request_serializer=encode, response_deserializer=decode)(
                request, metadata=metadata, timeout=3
            )
            async for _ in stream:
                frames -= 1
                if frames <= 0:
                    stream.cancel()
                    return grpc.StatusCode.OK
        else:
            await ch.unary_unary(path, request_serializer=encode, response_deserializer=decode)(
                request, metadata=metadata, timeout=3
            )
    except grpc.aio.AioRpcError as err:
        CODES[(path, err.code())] = rich_error(err).reason
        return err.code()
    return grpc.StatusCode.OK


CODES: dict[tuple[str, grpc.StatusCode], str] = {}


def empty(method: Any) -> message.Message:
    return message_factory.GetMessageClass(method.input_type)()


BAD_CREDENTIALS: dict[str, tuple[Callable[[], Any], str]] = {
    "no token": (lambda: (), "TOKEN_MISSING"),
    "malformed token": (lambda: (("authorization", "Basic dXNlcjpwYXNz"),), "TOKEN_INVALID"),
    "unknown token": (lambda: bearer("agentd_nobody-knows-this-one-000000"), "TOKEN_INVALID"),
    "expired JWT": (lambda: bearer(jwt_for(exp=int(time.time()) - 3600)), "TOKEN_EXPIRED"),
    "wrong audience": (lambda: bearer(jwt_for(aud="someone-else")), "TOKEN_INVALID"),
    "wrong issuer": (lambda: bearer(jwt_for(iss="https://evil.test")), "TOKEN_INVALID"),
}


def test_every_rpc_has_a_role() -> None:
    assert {f"{s.full_name}/{m.name}" for s, m in METHODS} == set(ROLES)


@pytest.mark.parametrize("case", sorted(BAD_CREDENTIALS))
async def test_bad_credentials_are_unauthenticated_on_every_rpc(secured: Running, case: str) -> None:
    metadata, reason = BAD_CREDENTIALS[case]
    for service, method in METHODS:
        code = await call(secured, service, method, empty(method), metadata())
        path = f"/{service.full_name}/{method.name}"
        assert code == grpc.StatusCode.UNAUTHENTICATED, f"{case}: {path} answered {code}"
        assert CODES[(path, code)] == reason, f"{case}: {path}"


@pytest.mark.parametrize("role", ["reader", "writer"])
async def test_a_role_too_weak_is_permission_denied_on_every_rpc_above_it(secured: Running, role: str) -> None:
    metadata = bearer(TOKENS[("acme", role)])
    for service, method in METHODS:
        path = f"/{service.full_name}/{method.name}"
        code = await call(secured, service, method, empty(method), metadata)
        if RANK[ROLES[path[1:]]] > RANK[role]:
            assert code == grpc.StatusCode.PERMISSION_DENIED, f"{role}: {path} answered {code}"
            assert CODES[(path, code)] == "ROLE_REQUIRED"
        else:
            assert code not in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED), path


def thread_opts(thread: str) -> opb.ExecutionOptions:
    return opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id=thread))


async def test_another_tenants_objects_are_not_found(secured: Running) -> None:
    """acme makes a thread (with messages, a notification, a cache entry and a
    live run); globex, an admin of its own tenant using the same ids, finds none of it."""
    acme, globex = bearer(TOKENS[("acme", "admin")]), bearer(TOKENS[("globex", "admin")])
    created = await secured.threads.CreateThread(
        tpb.CreateThreadRequest(thread=tpb.Thread(id="t1", resource_id="u1")), metadata=acme
    )
    assert created.thread.id == "t1" and created.thread.resource_id == "u1"  # the caller's ids, not scoped ones
    await secured.agents.Generate(
        apb.GenerateRequest(agent_id="chat", text="hello", options=thread_opts("t1")), metadata=acme
    )
    await secured.signals.SendNotification(
        sspb.SendNotificationRequest(
            agent_id="chat",
            resource_id="u1",
            thread_id="t1",
            notification=spb.NotificationInput(
                source="ci", kind="build", summary="done", priority=spb.NOTIFICATION_PRIORITY_LOW
            ),
        ),
        metadata=acme,
    )
    await secured.cache.SetCacheEntry(
        cpb.SetCacheEntryRequest(key="k", value=struct_pb2.Value(string_value="acme's")), metadata=acme
    )
    listed = await secured.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1"), metadata=acme)
    assert len(listed.messages) == 2 and all(m.thread_id == "t1" for m in listed.messages)
    slow = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t-live"))
    slow.provider_options.update({"local": {"delayMs": 50}})
    live = secured.agents.Stream(
        apb.StreamRequest(agent_id="chat", text=" ".join(["w"] * 100), options=slow), metadata=acme
    )
    run_id = (await live.read()).chunks[0].run_id
    snapshot = await secured.threads.Subscribe(
        tpb.SubscribeRequest(resource_id="u1", thread_id="t1"), metadata=acme
    ).read()
    epoch = snapshot.snapshot.log_epoch

    not_found = grpc.StatusCode.NOT_FOUND
    for request, rpc in [
        (tpb.GetThreadRequest(thread_id="t1"), secured.threads.GetThread),
        (tpb.GetThreadRequest(thread_id="t1", resource_id="u1"), secured.threads.GetThread),
        (tpb.ListMessagesRequest(thread_id="t1"), secured.threads.ListMessages),
        (tpb.DeleteThreadRequest(thread_id="t1"), secured.threads.DeleteThread),
        (tpb.UpdateThreadRequest(thread=tpb.Thread(id="t1", title="mine")), secured.threads.UpdateThread),
        (
            sspb.UpdateNotificationStatusRequest(
                thread_id="t1", notification_id="n", status=spb.NOTIFICATION_STATUS_SEEN
            ),
            secured.signals.UpdateNotificationStatus,
        ),
        (
            sspb.SendSignalRequest(
                agent_id="chat",
                target=spb.SignalTarget(run_id=run_id),
                signal=spb.SignalInput(type="reactive", text="in"),
            ),
            secured.signals.SendSignal,
        ),
    ]:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await rpc(request, metadata=globex)
        assert err.value.code() == not_found, f"{type(request).__name__}: {err.value.code()}"
    # Their notifications, their cache entry: nothing there.
    notes = await secured.signals.ListNotifications(sspb.ListNotificationsRequest(thread_id="t1"), metadata=globex)
    assert list(notes.notifications) == []
    got = await secured.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key="k"), metadata=globex)
    assert not got.found
    # Their run: not abortable, not there.
    aborted = await secured.threads.AbortRun(tpb.AbortRunRequest(thread_id="t-live", run_id=run_id), metadata=globex)
    assert not aborted.aborted
    # Their live thread: a subscription sees none of its chunks, and their epoch is no resume point.
    sub = secured.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id="t-live"), metadata=globex)
    first = await sub.read()
    assert first.snapshot.active_run_id == "" and first.snapshot.last_offset == 0
    sub.cancel()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await secured.threads.Subscribe(
            tpb.SubscribeRequest(
                resource_id="u1", thread_id="t1", resume=tpb.ResumePoint(log_epoch=epoch, after_offset=0)
            ),
            metadata=globex,
        ).read()
    assert err.value.code() == grpc.StatusCode.OUT_OF_RANGE  # another log: nothing of acme's to replay
    # A thread of the same ids is globex's own, empty.
    mine = await secured.threads.CreateThread(
        tpb.CreateThreadRequest(thread=tpb.Thread(id="t1", resource_id="u1")), metadata=globex
    )
    assert mine.thread.id == "t1"
    assert (
        list((await secured.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1"), metadata=globex)).messages)
        == []
    )
    assert (
        await secured.cache.GetCacheEntry(cpb.GetCacheEntryRequest(key="k"), metadata=acme)
    ).value.string_value == "acme's"
    live.cancel()


async def test_processors_see_who_is_calling_under_keys_no_caller_can_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentd.runtime import ProcessInputArgs, Processor

    seen: list[dict[str, Any]] = []

    class Witness(Processor):
        id = "witness"

        def process_input(self, args: ProcessInputArgs) -> None:
            seen.append(dict(args.request_context))

    token = TOKENS[("acme", "writer")]
    authenticator = Authenticator(
        ("token",),
        tokens=[Credential(hash_token(token), identity("acme", "acme-writer", ["writer"], ["*"], "token", "t"))],
    )
    running = await start_server([Agent(id="echo", input_processors=[Witness()])], gate=Gate(authenticator))
    try:
        request = apb.GenerateRequest(agent_id="echo", text="hi")
        request.options.request_context.update({"plan": "pro"})
        await running.agents.Generate(request, metadata=bearer(token))
        forged = apb.GenerateRequest(agent_id="echo", text="hi")
        forged.options.request_context.update({"agentd.tenant": "globex"})
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await running.agents.Generate(forged, metadata=bearer(token))
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        await running.close()
    assert seen == [{"plan": "pro", "agentd.tenant": "acme", "agentd.subject": "acme-writer"}]
