"""agentd's Python client told why a Connect was refused when the server ended
the call before the client wrote its open frame. That is what any gRPC server
that authenticates before reading does (agentd itself waits for the first
frame; an older agentd did not). grpc.aio fails that write with
`InvalidStateError: RPC already finished`; the session reads the status instead.

The server here is a real grpc.aio server whose Connect refuses at once. The
client's first write is held back until the refusal has arrived, so the
client meets the race every time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from agentd_client import AgentdClient, AgentdError

from agentd_proto.v1 import thread_service_pb2_grpc


class RefusesAtOnce(thread_service_pb2_grpc.ThreadServiceServicer):
    async def Connect(self, request_iterator: Any, context: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, "no credentials")
        yield  # pragma: no cover


@pytest.fixture
async def refusing() -> AsyncIterator[str]:
    server = grpc.aio.server()
    thread_service_pb2_grpc.add_ThreadServiceServicer_to_server(RefusesAtOnce(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    yield f"127.0.0.1:{port}"
    await server.stop(grace=0)


async def test_a_connect_refused_before_its_open_frame_raises_the_refusal(
    refusing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # grpc.aio's concrete call class (grpc.aio.StreamStreamCall is its abstract base).
    concrete: Any = grpc.aio._call.StreamStreamCall  # type: ignore[attr-defined]
    write = concrete.write

    async def late(call: Any, request: Any) -> None:
        await call.code()  # the server's status is in before the frame goes out
        await write(call, request)

    monkeypatch.setattr(concrete, "write", late)
    async with AgentdClient(refusing, token="") as client:
        with pytest.raises(AgentdError) as refused:
            await asyncio.wait_for(client.connect("echo", "t1", "u1", reconnect=False).open(), 10)
    assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert refused.value.message == "no credentials"
