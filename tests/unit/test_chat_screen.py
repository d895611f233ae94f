"""How `agentd chat` renders each chunk kind: replies inline, everything
else on marked lines of its own, our own message echoes not repeated."""

from __future__ import annotations

import io

from google.protobuf import struct_pb2

from agentd.chat import Screen
from agentd_proto.v1 import chunk_pb2, message_pb2


def value(data: object) -> struct_pb2.Value:
    v = struct_pb2.Value()
    if isinstance(data, dict):
        v.struct_value.update(data)
    else:
        v.string_value = str(data)
    return v


def render(*chunks: chunk_pb2.Chunk, sent: set[str] | None = None) -> str:
    out = io.StringIO()
    screen = Screen(out, sent=set(sent or ()))
    for chunk in chunks:
        screen.chunk(chunk)
    return out.getvalue()


def delta(text: str) -> chunk_pb2.Chunk:
    return chunk_pb2.Chunk(run_id="r1", text_delta=chunk_pb2.TextDeltaChunk(text=text))


FINISH = chunk_pb2.Chunk(run_id="r1", finish=chunk_pb2.FinishChunk())


def test_a_reply_streams_on_one_line_and_a_tool_call_and_result_are_marked() -> None:
    call = message_pb2.ToolCall(tool_call_id="c1", tool_name="weather", args=value({"city": "Oslo"}))
    result = message_pb2.ToolResult(tool_call_id="c1", tool_name="weather", result=value({"temp": 3}))
    screen = render(
        chunk_pb2.Chunk(run_id="r1", tool_call=call),
        chunk_pb2.Chunk(run_id="r1", tool_result=result),
        delta("It is "),
        delta("3 degrees."),
        FINISH,
    )
    assert screen == (
        '[tool call] weather({"city":"Oslo"})\n[tool result] weather -> {"temp":3.0}\nagent> It is 3 degrees.\n'
    )


def test_a_tripwire_an_error_and_an_abort_end_the_reply_line_and_are_marked() -> None:
    tripwire = chunk_pb2.TripwireChunk(tripwire=chunk_pb2.Tripwire(reason="off topic", processor_id="topic-guard"))
    screen = render(
        delta("Sure, "),
        chunk_pb2.Chunk(run_id="r1", tripwire=tripwire),
        chunk_pb2.Chunk(run_id="r1", error=chunk_pb2.ErrorChunk(message="boom", reason="MODEL_ERROR")),
        chunk_pb2.Chunk(run_id="r1", abort=chunk_pb2.AbortChunk(reason="ABORTED")),
    )
    assert screen == "agent> Sure, \n[blocked by topic-guard] off topic\n[error MODEL_ERROR] boom\n[aborted ABORTED]\n"


def test_signals_from_others_show_and_our_own_echo_does_not() -> None:
    def echo(signal_id: str, text: str, kind: str = "user") -> chunk_pb2.Chunk:
        signal = message_pb2.Signal(id=signal_id, type=kind, text=text)
        return chunk_pb2.Chunk(run_id="r1", signal=chunk_pb2.SignalEchoChunk(signal=signal))

    screen = render(echo("mine", "hi"), echo("theirs", "hello"), echo("s1", "be brief", "reactive"), sent={"mine"})
    assert screen == "[another client] hello\n[reactive signal] be brief\n"
