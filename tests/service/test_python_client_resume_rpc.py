"""agentd's Python client resumes a Connect session whose new call ends while
it resends what was unanswered, as a replica that goes away right after its
snapshot does. grpc.aio fails the resend with `InvalidStateError: RPC already
finished`; the session reads why the call ended and resumes again, and the
send that was waiting is answered on the call after.

The server here is a real grpc.aio server speaking Connect's frames: its first
call takes the send and ends UNAVAILABLE without answering it, its second ends
UNAVAILABLE right after the snapshot, its third answers. The client's resend on
the second call is held back until that call's status has arrived, so the
client meets the race every time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from agentd_client import AgentdClient

from agentd_proto.v1 import thread_service_pb2 as tpb
from agentd_proto.v1 import thread_service_pb2_grpc


class EndsTwice(thread_service_pb2_grpc.ThreadServiceServicer):
    def __init__(self) -> None:
        self.calls = 0
        #: The resume point each call was opened with (None: none).
        self.resumed: list[tuple[str, int] | None] = []

    async def Connect(self, request_iterator: Any, context: Any) -> AsyncIterator[tpb.ConnectResponse]:  # type: ignore[override]
        self.calls += 1
        call = self.calls
        frames = request_iterator.__aiter__()
        opening = (await frames.__anext__()).open
        resume = opening.resume if opening.HasField("resume") else None
        self.resumed.append((resume.log_epoch, resume.after_offset) if resume is not None else None)
        yield tpb.ConnectResponse(snapshot=tpb.ThreadSnapshot(log_epoch="epoch-1", last_offset=0))
        if call == 1:
            await frames.__anext__()  # the send, left unanswered
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the replica is going away")
        if call == 2:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the replica is going away too")
        async for frame in frames:
            yield tpb.ConnectResponse(request_id=frame.request_id, routing=tpb.ConnectRoutingAnswer())


@pytest.fixture
async def ends_twice() -> AsyncIterator[tuple[str, EndsTwice]]:
    server = grpc.aio.server()
    servicer = EndsTwice()
    thread_service_pb2_grpc.add_ThreadServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    yield f"127.0.0.1:{port}", servicer
    await server.stop(grace=0)


async def test_a_resend_on_a_call_that_ended_resumes_again_and_is_answered(
    ends_twice: tuple[str, EndsTwice], monkeypatch: pytest.MonkeyPatch
) -> None:
    address, servicer = ends_twice
    # grpc.aio's concrete call class (grpc.aio.StreamStreamCall is its abstract base).
    concrete: Any = grpc.aio._call.StreamStreamCall  # type: ignore[attr-defined]
    write = concrete.write
    calls: list[Any] = []

    async def late_on_the_second_call(call: Any, request: tpb.ConnectRequest) -> None:
        if call not in calls:
            calls.append(call)
        if calls.index(call) == 1 and request.WhichOneof("frame") != "open":
            await call.code()  # the call's status is in before the resend goes out
        await write(call, request)

    monkeypatch.setattr(concrete, "write", late_on_the_second_call)
    async with AgentdClient(address, token="") as client:
        session = client.connect("echo", "t1", "u1", reconnect=True)
        async with session:
            await asyncio.wait_for(session.send_message("hello"), 20)
            assert session.reconnects == 2
    assert servicer.calls == 3
    assert servicer.resumed == [None, ("epoch-1", 0), ("epoch-1", 0)]
