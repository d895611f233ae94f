"""Limits per caller, and reflection by configuration: at most `max_streams`
streams open per identity, a default deadline for unary calls that carry
none, reflection off or only for a caller who authenticates; a bidirectional
stream refused before it is read still tells a client that writes first why."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2

from agentd.grpc.auth import Authenticator, Credential, hash_token, identity
from agentd.grpc.gate import Gate, Limits
from agentd.runtime import Agent, ExecutionOptions
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.polling import until
from support.server import start_server

TOKEN = "agentd_limits-test-token-0123456789abcd"
AUTH = (("authorization", f"Bearer {TOKEN}"),)


def authenticator() -> Authenticator:
    return Authenticator(
        ("token",), tokens=[Credential(hash_token(TOKEN), identity("acme", "svc", ["writer"], ["*"], "token", "t"))]
    )


async def test_an_identity_may_hold_at_most_max_streams_open() -> None:
    running = await start_server([Agent(id="echo")], gate=Gate(authenticator(), Limits(max_streams=2)))
    try:
        open_ = [
            running.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id=f"t{i}"), metadata=AUTH)
            for i in range(2)
        ]
        for stream in open_:
            await stream.read()  # the snapshot: both are open
        with pytest.raises(grpc.aio.AioRpcError) as third:
            await running.threads.Subscribe(
                tpb.SubscribeRequest(resource_id="u1", thread_id="t9"), metadata=AUTH
            ).read()
        assert third.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "at most 2" in (third.value.details() or "")
        open_[0].cancel()

        async def opened() -> bool:
            again = running.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id="t9"), metadata=AUTH)
            try:
                return (await again.read()).HasField("snapshot")
            except grpc.aio.AioRpcError as refused:
                assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                return False  # the cancelled stream's handler has not ended yet
            finally:
                again.cancel()

        await until(opened, what="a slot to come free")
        open_[1].cancel()
    finally:
        await running.close()


async def test_a_unary_call_without_a_deadline_gets_the_default_one() -> None:
    slow = ExecutionOptions(provider_options={"local": {"delayMs": 200}})
    running = await start_server([Agent(id="slow", default_options=slow)], default_deadline=0.3)
    try:
        with pytest.raises(grpc.aio.AioRpcError) as late:
            await running.agents.Generate(apb.GenerateRequest(agent_id="slow", text="one two three four"))
        assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "default_deadline_seconds" in (late.value.details() or "")
        # A caller's own deadline wins over the default.
        reply = await running.agents.Generate(
            apb.GenerateRequest(agent_id="slow", text="one two three four"), timeout=10
        )
        assert reply.text == "one two three four"
    finally:
        await running.close()


OPEN = tpb.ConnectRequest(request_id="1", open=tpb.ConnectOpen(agent_id="echo", resource_id="u1", thread_id="t1"))
LIST = reflection_pb2.ServerReflectionRequest(list_services="")


def bidi(channel: grpc.aio.Channel, path: str, request: Any, response: Any) -> Any:
    return channel.stream_stream(
        path, request_serializer=type(request).SerializeToString, response_deserializer=response.FromString
    )


def reflection_path(version: str) -> str:
    """ServerReflectionInfo under reflection `version` (v1's messages are v1alpha's, field for field)."""
    return f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"


def reflection_info(channel: grpc.aio.Channel, version: str) -> Any:
    return bidi(channel, reflection_path(version), LIST, reflection_pb2.ServerReflectionResponse)


async def list_services(addr: str, metadata: tuple[tuple[str, str], ...], version: str) -> list[str]:
    async with grpc.aio.insecure_channel(addr) as channel:
        call = reflection_info(channel, version)(metadata=metadata, timeout=5)
        await call.write(LIST)
        reply = await call.read()
        await call.done_writing()
        return [s.name for s in reply.list_services_response.service]


async def refused_with(addr: str, version: str) -> grpc.StatusCode:
    """The status of a reflection call that sends nothing: a refusal comes before any request is
    read. (A write racing the refusal may fail INTERNAL in place of it: grpc/grpc#36066.)"""
    async with grpc.aio.insecure_channel(addr) as channel:
        code: grpc.StatusCode = await reflection_info(channel, version)(timeout=5).code()
        return code


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
@pytest.mark.parametrize("mode", ["off", "authenticated"])
async def test_reflection_is_off_or_only_for_a_caller_who_authenticates(mode: str, version: str) -> None:
    running = await start_server([Agent(id="echo")], gate=Gate(authenticator()), reflection_mode=mode)
    try:
        expected = grpc.StatusCode.UNIMPLEMENTED if mode == "off" else grpc.StatusCode.UNAUTHENTICATED
        assert await refused_with(running.addr, version) == expected
        if mode == "authenticated":
            assert "agentd.v1.AgentService" in await list_services(running.addr, AUTH, version)
    finally:
        await running.close()


def test_token_new_prints_a_token_once_and_lines_that_admit_it() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentd.cli",
            "token",
            "new",
            "--tenant",
            "acme",
            "--subject",
            "billing",
            "--roles",
            "writer",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    token = done.stdout.split("agentd keeps only its hash): ", 1)[1].split()[0]
    assert token.startswith("agentd_") and f'sha256 = "{hash_token(token)}"' in done.stdout
    assert 'tenant = "acme"' in done.stdout and 'roles = ["writer"]' in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "agentd.cli", "token", "new", "--tenant", "Acme!", "--subject", "x", "--roles", "root"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "agentd token new" in bad.stderr


@pytest.mark.parametrize(
    ("path", "frame", "response"),
    [
        ("/agentd.v1.ThreadService/Connect", OPEN, tpb.ConnectResponse),
        (reflection_path("v1"), LIST, reflection_pb2.ServerReflectionResponse),
    ],
)
async def test_a_stream_refused_before_it_is_read_says_why_to_a_client_that_writes_late(
    path: str, frame: Any, response: Any
) -> None:
    """The refusal waits for the caller's first frame: grpc-python's aio client
    fails a write that meets the call's end (INTERNAL in place of the status,
    grpc/grpc#36066, or "RPC already finished"), so a client that opens a stream
    and writes at once must not find it already refused."""
    running = await start_server([Agent(id="echo")], gate=Gate(authenticator()), reflection_mode="authenticated")
    bad = (("authorization", "Bearer agentd_not-a-known-token-0123456789"),)
    try:
        async with grpc.aio.insecure_channel(running.addr) as channel:
            call = bidi(channel, path, frame, response)(metadata=bad, timeout=10)
            await asyncio.sleep(0.2)  # the write comes well after the refusal would have, unread
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call.write(frame)
                await call.read()
            assert rich_error(refused.value).code == grpc.StatusCode.UNAUTHENTICATED
            assert rich_error(refused.value).reason

            # A caller that never writes is refused all the same.
            silent = bidi(channel, path, frame, response)(metadata=bad, timeout=10)
            assert await silent.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await running.close()
