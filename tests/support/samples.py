"""Values of every runtime type, bytes included, for round-trip tests (the codec,
the cache backends): one message with every part type, one cached response
with every chunk type."""

from __future__ import annotations

from datetime import UTC, datetime

from agentd.runtime import chunks
from agentd.runtime.chunks import Payload, Tripwire, Usage
from agentd.runtime.messages import (
    DataPart,
    FilePart,
    Message,
    Part,
    ReasoningPart,
    SignalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from agentd.runtime.models.base import ModelFinish
from agentd.runtime.processors.base import CachedLLMResponse
from agentd.runtime.signals import Signal, create_signal

NOW = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
#: Every byte value, then NUL and 0xFF again: not UTF-8, not text.
BLOB = bytes(range(256)) + b"\x00\xff"


def sample_signal() -> Signal:
    return create_signal(
        "notification",
        [TextPart("see the attached file"), FilePart("image/png", data=BLOB)],
        attributes=[("from", "ci"), ("attempt", 2)],
        metadata={"k": [1, 2]},
        created_at=NOW,
        id="sig-1",
    )


def sample_message() -> Message:
    """A message holding one part of every part type."""
    parts = every_part()
    return Message(role="assistant", parts=parts, id="msg-1", metadata={"step": 1}, thread_id="t-1", created_at=NOW)


def every_part() -> list[Part]:
    return [
        TextPart("héllo \u2603 \U0001f600", provider_options={"some-provider": {"cache": True}}),
        FilePart("application/octet-stream", data=BLOB, filename="blob.bin"),
        ReasoningPart("thinking", signature="sig", redacted_data=b"\x00\x01\xfe"),
        ToolCallPart("call-1", "search", args={"q": "x", "n": [1, 2.5, None, True]}, client_tool=True),
        ToolResultPart("call-1", "search", result={"hits": []}, is_error=True, args={"q": "x"}),
        DataPart("data-progress", data={"pct": 50}, id="d-1"),
        SignalPart(sample_signal()),
    ]


def every_payload() -> list[Payload]:
    """One instance of every chunk payload type, with its non-default fields set."""
    return [
        chunks.Start(agent_id="agent", thread_id="t-1", resource_id="r-1"),
        chunks.StepStart(step_number=1, message_id="m-1", model="provider/model", started_at=NOW, warnings=["w"]),
        chunks.TextStart("t1", provider_metadata={"p": {"x": 1}}),
        chunks.TextDelta("t1", "héllo \U0001f600"),
        chunks.TextEnd("t1"),
        chunks.ReasoningStart("r1"),
        chunks.ReasoningDelta("r1", "thinking"),
        chunks.ReasoningEnd("r1", signature="sig", redacted_data=BLOB),
        chunks.ToolCallStart("call-1", "search", provider_executed=True),
        chunks.ToolCallDelta("call-1", '{"q":', tool_name="search"),
        chunks.ToolCallEnd("call-1"),
        chunks.ToolCall(ToolCallPart("call-1", "search", args={"q": "x"})),
        chunks.ToolResult(ToolResultPart("call-1", "search", result=[1, {"a": None}])),
        chunks.StepFinish(1, "m-1", "tool-calls", Usage(10, 5, 15), is_continued=True, warnings=["w"]),
        chunks.Finish(
            "stop",
            Usage(1, 2, 3, 4, 5, 6),
            Usage(2, 4, 6),
            response_messages=[sample_message()],
            object={"answer": 42},
            tripwire=Tripwire("blocked", retry=True, metadata={"m": 1}, processor_id="p"),
        ),
        chunks.Error("boom", status_code=500, provider_code="overloaded", retryable=True, details={"d": 1}),
        chunks.Abort("ABORTED", "cancelled by the caller"),
        chunks.TripwireChunk(Tripwire("blocked")),
        chunks.Data("data-progress", data={"pct": 50}, id="d-1", transient=True),
        chunks.SignalEcho(sample_signal()),
        chunks.File(FilePart("image/png", data=BLOB, filename="x.png")),
        chunks.Source("s-1", "url", title="T", url="https://example.invalid/x", media_type="text/html"),
        chunks.ObjectPartial({"partial": [1]}),
        chunks.ResponseMetadata("resp-1", "model-x", NOW),
    ]


def sample_response() -> CachedLLMResponse:
    """A cached model response with every chunk type, a model finish and a tool result."""
    return CachedLLMResponse(
        chunks=[*every_payload(), ModelFinish("stop", Usage(3, 4, 7), raw_finish_reason="end_turn")],
        warnings=["w1"],
        tool_results=[ToolResultPart("call-1", "search", result={"ok": True})],
    )
