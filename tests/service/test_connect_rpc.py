"""ThreadService.Connect: frames and answers on one bidirectional stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.rpc import error_details_pb2

from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.server import Running


class Session:
    """A Connect stream: `send` frames, `next` reads what comes back."""

    def __init__(self, running: Running) -> None:
        self.frames: asyncio.Queue[tpb.ConnectRequest | None] = asyncio.Queue()
        self.call = running.threads.Connect(self._frames())

    async def _frames(self) -> AsyncIterator[tpb.ConnectRequest]:
        while (frame := await self.frames.get()) is not None:
            yield frame

    async def send(self, request_id: str = "", **frame: Any) -> None:
        await self.frames.put(tpb.ConnectRequest(request_id=request_id, **frame))

    async def next(self) -> tpb.ConnectResponse:
        message = await asyncio.wait_for(self.call.read(), 10)
        assert message is not grpc.aio.EOF
        return message

    async def until(self, predicate: Any) -> list[tpb.ConnectResponse]:
        seen = []
        while True:
            message = await self.next()
            seen.append(message)
            if predicate(message):
                return seen

    async def close(self) -> None:
        await self.frames.put(None)


def reason(response: tpb.ConnectResponse) -> str:
    for detail in response.error.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason
    return ""


def opened(**kwargs: Any) -> dict[str, Any]:
    return {"open": tpb.ConnectOpen(agent_id="chat", resource_id="u1", thread_id="t1", **kwargs)}


def finished(message: tpb.ConnectResponse) -> bool:
    return message.HasField("chunks") and message.chunks.chunks[-1].HasField("finish")


async def test_open_then_send_answers_before_the_runs_chunks(running: Running) -> None:
    session = Session(running)
    await session.send("o1", **opened())
    first = await session.next()
    assert first.HasField("snapshot") and first.request_id == "o1"
    await session.send("m1", send_message=tpb.ConnectSendMessage(message=spb.MessageInput(text="hello there")))
    seen = await session.until(finished)
    assert seen[0].request_id == "m1" and seen[0].routing.decision.WhichOneof("action") == "wake"
    run_id = seen[0].routing.decision.wake.run_id
    chunks = [c for m in seen[1:] for c in m.chunks.chunks]
    assert {c.run_id for c in chunks} == {run_id}
    assert chunks[1].signal.signal.text == "hello there"  # the echo of the waking message
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "hello there"
    await session.close()
    assert await session.call.read() is grpc.aio.EOF  # half-close ends the stream
    assert await session.call.code() == grpc.StatusCode.OK


async def test_bad_frames_get_errors_and_the_stream_goes_on(running: Running) -> None:
    session = Session(running)
    await session.send("early", send_message=tpb.ConnectSendMessage(message=spb.MessageInput(text="x")))
    assert reason(await session.next()) == "STREAM_NOT_OPEN"
    await session.send("o1", **opened())
    assert (await session.next()).HasField("snapshot")
    await session.send("again", **opened())
    again = await session.next()
    assert again.request_id == "again" and again.error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    await session.send("bad", send_signal=tpb.ConnectSendSignal(signal=spb.SignalInput(type="banana", text="x")))
    bad = await session.next()
    assert (bad.request_id, reason(bad)) == ("bad", "UNKNOWN_SIGNAL_TYPE")
    await session.send("empty")
    assert (await session.next()).request_id == "empty"
    await session.send("ok", send_message=tpb.ConnectSendMessage(message=spb.MessageInput(text="still here")))
    seen = await session.until(finished)
    assert seen[0].request_id == "ok" and seen[0].routing.decision.WhichOneof("action") == "wake"
    await session.close()


async def test_abort_through_connect(running: Running) -> None:
    session = Session(running)
    await session.send("o1", **opened())
    await session.next()
    slow = opb.ExecutionOptions()
    slow.provider_options.update({"local": {"delayMs": 30}})
    await session.send(
        "m1",
        send_message=tpb.ConnectSendMessage(
            message=spb.MessageInput(text=" ".join(["w"] * 300)), if_idle=spb.IfIdle(stream_options=slow)
        ),
    )
    run_id = (await session.next()).routing.decision.wake.run_id
    await session.send("a1", abort=tpb.ConnectAbort())
    seen = await session.until(lambda m: m.request_id == "a1")
    assert (seen[-1].abort.aborted, seen[-1].abort.run_id) == (True, run_id)
    rest = await session.until(lambda m: m.HasField("chunks") and m.chunks.chunks[-1].HasField("abort"))
    assert rest[-1].chunks.chunks[-1].abort.reason == "ABORTED"
    await session.close()


async def test_a_client_tool_answered_over_connect(running: Running) -> None:
    session = Session(running)
    await session.send("o1", **opened())
    await session.next()
    options = opb.ExecutionOptions(client_tools=[opb.ClientTool(name="pick_color", description="Asks the user")])
    options.provider_options.update(
        {
            "local": {
                "script": [
                    {"toolCalls": [{"id": "call-1", "name": "pick_color", "args": {"choices": ["red", "blue"]}}]},
                    {"text": "You picked blue."},
                ]
            }
        }
    )
    running.host.agents.get("chat").model = "local/scripted"
    await session.send(
        "m1",
        send_message=tpb.ConnectSendMessage(
            message=spb.MessageInput(text="choose"), if_idle=spb.IfIdle(stream_options=options)
        ),
    )
    seen = await session.until(lambda m: m.HasField("chunks") and any(c.HasField("tool_call") for c in m.chunks.chunks))
    call = next(c for m in seen for c in m.chunks.chunks if c.HasField("tool_call"))
    assert call.tool_call.client_tool and call.tool_call.tool_name == "pick_color"
    result = tpb.ConnectToolResult(run_id=call.run_id, tool_call_id="call-1")
    result.result.string_value = "blue"
    await session.send("t1", tool_result=result)
    seen = await session.until(finished)
    assert any(m.request_id == "t1" and m.HasField("tool_result_ack") for m in seen)
    chunks = [c for m in seen for c in m.chunks.chunks]
    assert [c.tool_result.result.string_value for c in chunks if c.HasField("tool_result")] == ["blue"]
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "You picked blue."
    await session.send("t2", tool_result=result)  # answered already
    assert reason(await session.next()) == "TOOL_CALL_NOT_FOUND"
    await session.close()
