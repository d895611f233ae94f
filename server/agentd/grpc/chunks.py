"""Runtime chunks (what a run streams) to protobuf, with the usage and the
tripwire they carry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast, get_args, overload

from google.protobuf import struct_pb2
from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from google.protobuf.message import Message

from agentd.grpc.messages import add_message
from agentd.grpc.parts import file_to_pb, tool_call_to_pb, tool_result_to_pb
from agentd.grpc.signals import signal_to_pb
from agentd.grpc.values import enum_values, to_struct, to_timestamp, to_value
from agentd.runtime import chunks as runtime_chunks
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import usage_pb2 as upb

FINISH_REASONS = enum_values(upb.FinishReason, "FINISH_REASON_", get_args(runtime_chunks.FinishReason))
SOURCES = enum_values(cpb.ChunkSource, "CHUNK_SOURCE_", get_args(runtime_chunks.ChunkSource))


def usage_to_pb(usage: runtime_chunks.Usage) -> upb.Usage:
    out = upb.Usage()
    fill_usage(out, usage)
    return out


def fill_usage(target: upb.Usage, usage: runtime_chunks.Usage) -> None:
    """`usage` written into a Usage field where it is (present even with no
    counter reported): cheaper than naming every counter, most of them
    unreported, and than copying one in. Setting a counter makes the field
    present, so SetInParent only when the first is unreported."""
    n = usage.input_tokens
    if n is None:
        target.SetInParent()
    else:
        target.input_tokens = n
    n = usage.output_tokens
    if n is not None:
        target.output_tokens = n
    n = usage.total_tokens
    if n is not None:
        target.total_tokens = n
    n = usage.reasoning_tokens
    if n is not None:
        target.reasoning_tokens = n
    n = usage.cached_input_tokens
    if n is not None:
        target.cached_input_tokens = n
    n = usage.cache_creation_input_tokens
    if n is not None:
        target.cache_creation_input_tokens = n


@overload
def tripwire_to_pb(tripwire: runtime_chunks.Tripwire) -> cpb.Tripwire: ...
@overload
def tripwire_to_pb(tripwire: None) -> None: ...
@overload
def tripwire_to_pb(tripwire: runtime_chunks.Tripwire | None) -> cpb.Tripwire | None: ...
def tripwire_to_pb(tripwire: runtime_chunks.Tripwire | None) -> cpb.Tripwire | None:
    if tripwire is None:
        return None
    return cpb.Tripwire(
        reason=tripwire.reason,
        retry=tripwire.retry,
        metadata=to_struct(tripwire.metadata),
        processor_id=tripwire.processor_id or "",
    )


# Each filler writes a payload into its (empty) field of a Chunk in place:
# building a sub-message and assigning it would copy it again, per chunk.


def _struct(target: struct_pb2.Struct, obj: dict[str, Any] | None) -> None:
    if obj:  # empty or None: left unset, as to_struct leaves it
        target.update(obj)


def _copy(target: Message, value: Message | None) -> None:
    if value is not None:
        target.CopyFrom(value)


def _text_start(t: cpb.TextStartChunk, p: runtime_chunks.TextStart) -> None:
    t.id = p.id
    _struct(t.provider_metadata, p.provider_metadata)


def _text_delta(t: cpb.TextDeltaChunk, p: runtime_chunks.TextDelta) -> None:
    t.id = p.id
    t.text = p.text
    _struct(t.provider_metadata, p.provider_metadata)


def _text_end(t: cpb.TextEndChunk, p: runtime_chunks.TextEnd) -> None:
    t.id = p.id
    _struct(t.provider_metadata, p.provider_metadata)


def _start(t: cpb.StartChunk, p: runtime_chunks.Start) -> None:
    t.agent_id = p.agent_id
    t.thread_id = p.thread_id or ""
    t.resource_id = p.resource_id or ""


def _step_start(t: cpb.StepStartChunk, p: runtime_chunks.StepStart) -> None:
    t.step_number = p.step_number
    t.message_id = p.message_id
    t.model = p.model
    _copy(t.start_time, to_timestamp(p.started_at))
    t.warnings.extend(p.warnings)


def _reasoning_start(t: cpb.ReasoningStartChunk, p: runtime_chunks.ReasoningStart) -> None:
    t.id = p.id
    _struct(t.provider_metadata, p.provider_metadata)


def _reasoning_delta(t: cpb.ReasoningDeltaChunk, p: runtime_chunks.ReasoningDelta) -> None:
    t.id = p.id
    t.text = p.text
    _struct(t.provider_metadata, p.provider_metadata)


def _reasoning_end(t: cpb.ReasoningEndChunk, p: runtime_chunks.ReasoningEnd) -> None:
    t.id = p.id
    t.signature = p.signature or ""
    t.redacted_data = p.redacted_data or b""
    _struct(t.provider_metadata, p.provider_metadata)


def _tool_call_start(t: cpb.ToolCallStartChunk, p: runtime_chunks.ToolCallStart) -> None:
    t.tool_call_id = p.tool_call_id
    t.tool_name = p.tool_name
    t.provider_executed = p.provider_executed
    _struct(t.provider_metadata, p.provider_metadata)


def _tool_call_delta(t: cpb.ToolCallDeltaChunk, p: runtime_chunks.ToolCallDelta) -> None:
    t.tool_call_id = p.tool_call_id
    t.args_text_delta = p.args_text_delta
    t.tool_name = p.tool_name or ""


def _tool_call_end(t: cpb.ToolCallEndChunk, p: runtime_chunks.ToolCallEnd) -> None:
    t.tool_call_id = p.tool_call_id


def _tool_call(t: mpb.ToolCall, p: runtime_chunks.ToolCall) -> None:
    t.CopyFrom(tool_call_to_pb(p.call))


def _tool_result(t: mpb.ToolResult, p: runtime_chunks.ToolResult) -> None:
    t.CopyFrom(tool_result_to_pb(p.result))


def _step_finish(t: cpb.StepFinishChunk, p: runtime_chunks.StepFinish) -> None:
    t.step_number = p.step_number
    t.message_id = p.message_id
    t.finish_reason = FINISH_REASONS[p.finish_reason]
    t.raw_finish_reason = p.raw_finish_reason or ""
    fill_usage(t.usage, p.usage)
    t.is_continued = p.is_continued
    _struct(t.provider_metadata, p.provider_metadata)
    t.model = p.model
    _copy(t.tripwire, tripwire_to_pb(p.tripwire))
    t.warnings.extend(p.warnings)


def _finish(t: cpb.FinishChunk, p: runtime_chunks.Finish) -> None:
    t.finish_reason = FINISH_REASONS[p.finish_reason]
    t.raw_finish_reason = p.raw_finish_reason or ""
    fill_usage(t.usage, p.usage)
    fill_usage(t.total_usage, p.total_usage)
    for message in p.response_messages:
        add_message(t.response_messages, message)
    _struct(t.provider_metadata, p.provider_metadata)
    t.model = p.model
    if p.object is not None:
        t.object.CopyFrom(to_value(p.object))
    _copy(t.tripwire, tripwire_to_pb(p.tripwire))


def _error(t: cpb.ErrorChunk, p: runtime_chunks.Error) -> None:
    t.message = p.message
    t.reason = p.reason
    t.status_code = p.status_code or 0
    t.provider_code = p.provider_code or ""
    t.retryable = p.retryable
    _struct(t.details, p.details)


def _abort(t: cpb.AbortChunk, p: runtime_chunks.Abort) -> None:
    t.reason = p.reason
    t.message = p.message


def _tripwire(t: cpb.TripwireChunk, p: runtime_chunks.TripwireChunk) -> None:
    _copy(t.tripwire, tripwire_to_pb(p.tripwire))


def _data(t: cpb.DataChunk, p: runtime_chunks.Data) -> None:
    t.type = p.type
    t.id = p.id or ""
    t.data.CopyFrom(to_value(p.data))
    t.transient = p.transient


def _signal(t: cpb.SignalEchoChunk, p: runtime_chunks.SignalEcho) -> None:
    t.signal.CopyFrom(signal_to_pb(p.signal))


def _file(t: cpb.FileChunk, p: runtime_chunks.File) -> None:
    t.file.CopyFrom(file_to_pb(p.file))


def _source(t: cpb.SourceChunk, p: runtime_chunks.Source) -> None:
    t.id = p.id
    t.source_type = p.source_type
    t.title = p.title
    t.url = p.url or ""
    t.media_type = p.media_type or ""
    t.filename = p.filename or ""
    _struct(t.provider_metadata, p.provider_metadata)


def _object(t: cpb.ObjectChunk, p: runtime_chunks.ObjectPartial) -> None:
    t.object.CopyFrom(to_value(p.object))


def _response_metadata(t: cpb.ResponseMetadataChunk, p: runtime_chunks.ResponseMetadata) -> None:
    t.response_id = p.response_id or ""
    t.model_id = p.model_id or ""
    _copy(t.time, to_timestamp(p.time))


#: Each payload type: the Chunk's oneof field it goes in, and its filler.
_FILLERS: dict[type, tuple[str, Callable[[Any, Any], None]]] = {
    runtime_chunks.Start: ("start", _start),
    runtime_chunks.StepStart: ("step_start", _step_start),
    runtime_chunks.TextStart: ("text_start", _text_start),
    runtime_chunks.TextDelta: ("text_delta", _text_delta),
    runtime_chunks.TextEnd: ("text_end", _text_end),
    runtime_chunks.ReasoningStart: ("reasoning_start", _reasoning_start),
    runtime_chunks.ReasoningDelta: ("reasoning_delta", _reasoning_delta),
    runtime_chunks.ReasoningEnd: ("reasoning_end", _reasoning_end),
    runtime_chunks.ToolCallStart: ("tool_call_start", _tool_call_start),
    runtime_chunks.ToolCallDelta: ("tool_call_delta", _tool_call_delta),
    runtime_chunks.ToolCallEnd: ("tool_call_end", _tool_call_end),
    runtime_chunks.ToolCall: ("tool_call", _tool_call),
    runtime_chunks.ToolResult: ("tool_result", _tool_result),
    runtime_chunks.StepFinish: ("step_finish", _step_finish),
    runtime_chunks.Finish: ("finish", _finish),
    runtime_chunks.Error: ("error", _error),
    runtime_chunks.Abort: ("abort", _abort),
    runtime_chunks.TripwireChunk: ("tripwire", _tripwire),
    runtime_chunks.Data: ("data", _data),
    runtime_chunks.SignalEcho: ("signal", _signal),
    runtime_chunks.File: ("file", _file),
    runtime_chunks.Source: ("source_ref", _source),
    runtime_chunks.ObjectPartial: ("object", _object),
    runtime_chunks.ResponseMetadata: ("response_metadata", _response_metadata),
}


def fill_chunk(pb: cpb.Chunk, chunk: runtime_chunks.Chunk) -> None:
    """Writes `chunk` into the empty message `pb`."""
    field, fill = _FILLERS[type(chunk.payload)]
    target = getattr(pb, field)
    target.SetInParent()  # the oneof is chosen even when every field is empty
    fill(target, chunk.payload)
    pb.run_id = chunk.run_id
    pb.seq = chunk.seq
    if chunk.parent_run_id:
        pb.parent_run_id = chunk.parent_run_id
    if chunk.offset:
        pb.offset = chunk.offset
    pb.source = SOURCES[chunk.source]
    if chunk.metadata:
        pb.metadata.update(chunk.metadata)


def chunk_to_pb(chunk: runtime_chunks.Chunk) -> cpb.Chunk:
    pb = cpb.Chunk()
    fill_chunk(pb, chunk)
    return pb


def add_chunks(into: RepeatedCompositeFieldContainer[cpb.Chunk], chunks: Sequence[runtime_chunks.Chunk]) -> None:
    """Appends `chunks` to a message's repeated Chunk field, built in place."""
    add = into.add
    for chunk in chunks:
        fill_chunk(add(), chunk)


#: The most bytes a message of chunks is split under (the default gRPC
#: receive limit is 4 MiB).
MAX_BATCH_BYTES = 3 * 1024 * 1024

M = TypeVar("M", bound=Message)


def batch_budget(max_message_bytes: int) -> int:
    """The byte budget a message of chunks is split under: 3/4 of the server's
    message limit (room for what wraps the chunks), at most MAX_BATCH_BYTES."""
    return min(MAX_BATCH_BYTES, max_message_bytes * 3 // 4)


def sized(
    build: Callable[[Sequence[runtime_chunks.Chunk]], M], chunks: Sequence[runtime_chunks.Chunk], budget: int
) -> list[M]:
    """`build(chunks)`, split in halves while it is over `budget` bytes. One
    chunk is never split: one too large for a message is the stream's to refuse."""
    response = build(chunks)
    if len(chunks) == 1 or response.ByteSize() <= budget:
        return [response]
    middle = len(chunks) // 2
    return sized(build, chunks[:middle], budget) + sized(build, chunks[middle:], budget)


def lone_chunk(response: Message) -> cpb.Chunk | None:
    """The one chunk a stream message carries (StreamResponse's `chunks`, or a
    Subscribe/Connect answer's ChunkBatch), None when it carries none or several."""
    if not any(f.name == "chunks" for f in response.DESCRIPTOR.fields):
        return None
    chunks: Any = cast(Any, response).chunks
    if isinstance(chunks, Message):  # a ChunkBatch
        chunks = cast(Any, chunks).chunks
    return chunks[0] if len(chunks) == 1 else None
