"""Runtime chunks (what a run streams) to protobuf, with the usage and the
tripwire they carry."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, get_args

from agentd.grpc.messages import message_to_pb
from agentd.grpc.parts import file_to_pb, tool_call_to_pb, tool_result_to_pb
from agentd.grpc.signals import signal_to_pb
from agentd.grpc.values import enum_values, to_struct, to_timestamp, to_value
from agentd.runtime import chunks as runtime_chunks
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import usage_pb2 as upb

FINISH_REASONS = enum_values(upb.FinishReason, "FINISH_REASON_", get_args(runtime_chunks.FinishReason))
SOURCES = enum_values(cpb.ChunkSource, "CHUNK_SOURCE_", get_args(runtime_chunks.ChunkSource))


def usage_to_pb(usage: runtime_chunks.Usage) -> upb.Usage:
    # The same counters by the same names (None: not reported), named one by
    # one: dataclasses.asdict (deep-copying) cost more than the rest of a reply.
    return upb.Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
    )


def tripwire_to_pb(tripwire: runtime_chunks.Tripwire | None) -> cpb.Tripwire | None:
    if tripwire is None:
        return None
    return cpb.Tripwire(
        reason=tripwire.reason,
        retry=tripwire.retry,
        metadata=to_struct(tripwire.metadata),
        processor_id=tripwire.processor_id or "",
    )


def _text_start(p: runtime_chunks.TextStart) -> cpb.Chunk:
    return cpb.Chunk(text_start=cpb.TextStartChunk(id=p.id, provider_metadata=to_struct(p.provider_metadata)))


def _text_delta(p: runtime_chunks.TextDelta) -> cpb.Chunk:
    return cpb.Chunk(
        text_delta=cpb.TextDeltaChunk(id=p.id, text=p.text, provider_metadata=to_struct(p.provider_metadata))
    )


def _text_end(p: runtime_chunks.TextEnd) -> cpb.Chunk:
    return cpb.Chunk(text_end=cpb.TextEndChunk(id=p.id, provider_metadata=to_struct(p.provider_metadata)))


def _start(p: runtime_chunks.Start) -> cpb.Chunk:
    return cpb.Chunk(
        start=cpb.StartChunk(agent_id=p.agent_id, thread_id=p.thread_id or "", resource_id=p.resource_id or "")
    )


def _step_start(p: runtime_chunks.StepStart) -> cpb.Chunk:
    return cpb.Chunk(
        step_start=cpb.StepStartChunk(
            step_number=p.step_number,
            message_id=p.message_id,
            model=p.model,
            start_time=to_timestamp(p.started_at),
            warnings=p.warnings,
        )
    )


def _reasoning_start(p: runtime_chunks.ReasoningStart) -> cpb.Chunk:
    return cpb.Chunk(reasoning_start=cpb.ReasoningStartChunk(id=p.id, provider_metadata=to_struct(p.provider_metadata)))


def _reasoning_delta(p: runtime_chunks.ReasoningDelta) -> cpb.Chunk:
    return cpb.Chunk(
        reasoning_delta=cpb.ReasoningDeltaChunk(id=p.id, text=p.text, provider_metadata=to_struct(p.provider_metadata))
    )


def _reasoning_end(p: runtime_chunks.ReasoningEnd) -> cpb.Chunk:
    return cpb.Chunk(
        reasoning_end=cpb.ReasoningEndChunk(
            id=p.id,
            signature=p.signature or "",
            redacted_data=p.redacted_data or b"",
            provider_metadata=to_struct(p.provider_metadata),
        )
    )


def _tool_call_start(p: runtime_chunks.ToolCallStart) -> cpb.Chunk:
    return cpb.Chunk(
        tool_call_start=cpb.ToolCallStartChunk(
            tool_call_id=p.tool_call_id,
            tool_name=p.tool_name,
            provider_executed=p.provider_executed,
            provider_metadata=to_struct(p.provider_metadata),
        )
    )


def _tool_call_delta(p: runtime_chunks.ToolCallDelta) -> cpb.Chunk:
    return cpb.Chunk(
        tool_call_delta=cpb.ToolCallDeltaChunk(
            tool_call_id=p.tool_call_id, args_text_delta=p.args_text_delta, tool_name=p.tool_name or ""
        )
    )


def _tool_call_end(p: runtime_chunks.ToolCallEnd) -> cpb.Chunk:
    return cpb.Chunk(tool_call_end=cpb.ToolCallEndChunk(tool_call_id=p.tool_call_id))


def _tool_call(p: runtime_chunks.ToolCall) -> cpb.Chunk:
    return cpb.Chunk(tool_call=tool_call_to_pb(p.call))


def _tool_result(p: runtime_chunks.ToolResult) -> cpb.Chunk:
    return cpb.Chunk(tool_result=tool_result_to_pb(p.result))


def _step_finish(p: runtime_chunks.StepFinish) -> cpb.Chunk:
    return cpb.Chunk(
        step_finish=cpb.StepFinishChunk(
            step_number=p.step_number,
            message_id=p.message_id,
            finish_reason=FINISH_REASONS[p.finish_reason],
            raw_finish_reason=p.raw_finish_reason or "",
            usage=usage_to_pb(p.usage),
            is_continued=p.is_continued,
            provider_metadata=to_struct(p.provider_metadata),
            model=p.model,
            tripwire=tripwire_to_pb(p.tripwire),
            warnings=p.warnings,
        )
    )


def _finish(p: runtime_chunks.Finish) -> cpb.Chunk:
    return cpb.Chunk(
        finish=cpb.FinishChunk(
            finish_reason=FINISH_REASONS[p.finish_reason],
            raw_finish_reason=p.raw_finish_reason or "",
            usage=usage_to_pb(p.usage),
            total_usage=usage_to_pb(p.total_usage),
            response_messages=[message_to_pb(m) for m in p.response_messages],
            provider_metadata=to_struct(p.provider_metadata),
            model=p.model,
            object=to_value(p.object) if p.object is not None else None,
            tripwire=tripwire_to_pb(p.tripwire),
        )
    )


def _error(p: runtime_chunks.Error) -> cpb.Chunk:
    return cpb.Chunk(
        error=cpb.ErrorChunk(
            message=p.message,
            reason=p.reason,
            status_code=p.status_code or 0,
            provider_code=p.provider_code or "",
            retryable=p.retryable,
            details=to_struct(p.details),
        )
    )


def _abort(p: runtime_chunks.Abort) -> cpb.Chunk:
    return cpb.Chunk(abort=cpb.AbortChunk(reason=p.reason, message=p.message))


def _tripwire(p: runtime_chunks.TripwireChunk) -> cpb.Chunk:
    return cpb.Chunk(tripwire=cpb.TripwireChunk(tripwire=tripwire_to_pb(p.tripwire)))


def _data(p: runtime_chunks.Data) -> cpb.Chunk:
    return cpb.Chunk(data=cpb.DataChunk(type=p.type, id=p.id or "", data=to_value(p.data), transient=p.transient))


def _signal(p: runtime_chunks.SignalEcho) -> cpb.Chunk:
    return cpb.Chunk(signal=cpb.SignalEchoChunk(signal=signal_to_pb(p.signal)))


def _file(p: runtime_chunks.File) -> cpb.Chunk:
    return cpb.Chunk(file=cpb.FileChunk(file=file_to_pb(p.file)))


def _source(p: runtime_chunks.Source) -> cpb.Chunk:
    return cpb.Chunk(
        source_ref=cpb.SourceChunk(
            id=p.id,
            source_type=p.source_type,
            title=p.title,
            url=p.url or "",
            media_type=p.media_type or "",
            filename=p.filename or "",
            provider_metadata=to_struct(p.provider_metadata),
        )
    )


def _object(p: runtime_chunks.ObjectPartial) -> cpb.Chunk:
    return cpb.Chunk(object=cpb.ObjectChunk(object=to_value(p.object)))


def _response_metadata(p: runtime_chunks.ResponseMetadata) -> cpb.Chunk:
    return cpb.Chunk(
        response_metadata=cpb.ResponseMetadataChunk(
            response_id=p.response_id or "", model_id=p.model_id or "", time=to_timestamp(p.time)
        )
    )


_CHUNK_BUILDERS: dict[type, Callable[[Any], cpb.Chunk]] = {
    runtime_chunks.Start: _start,
    runtime_chunks.StepStart: _step_start,
    runtime_chunks.TextStart: _text_start,
    runtime_chunks.TextDelta: _text_delta,
    runtime_chunks.TextEnd: _text_end,
    runtime_chunks.ReasoningStart: _reasoning_start,
    runtime_chunks.ReasoningDelta: _reasoning_delta,
    runtime_chunks.ReasoningEnd: _reasoning_end,
    runtime_chunks.ToolCallStart: _tool_call_start,
    runtime_chunks.ToolCallDelta: _tool_call_delta,
    runtime_chunks.ToolCallEnd: _tool_call_end,
    runtime_chunks.ToolCall: _tool_call,
    runtime_chunks.ToolResult: _tool_result,
    runtime_chunks.StepFinish: _step_finish,
    runtime_chunks.Finish: _finish,
    runtime_chunks.Error: _error,
    runtime_chunks.Abort: _abort,
    runtime_chunks.TripwireChunk: _tripwire,
    runtime_chunks.Data: _data,
    runtime_chunks.SignalEcho: _signal,
    runtime_chunks.File: _file,
    runtime_chunks.Source: _source,
    runtime_chunks.ObjectPartial: _object,
    runtime_chunks.ResponseMetadata: _response_metadata,
}


def chunk_to_pb(chunk: runtime_chunks.Chunk) -> cpb.Chunk:
    pb = _CHUNK_BUILDERS[type(chunk.payload)](chunk.payload)
    pb.run_id = chunk.run_id
    pb.seq = chunk.seq
    if chunk.parent_run_id:
        pb.parent_run_id = chunk.parent_run_id
    if chunk.offset:
        pb.offset = chunk.offset
    pb.source = SOURCES[chunk.source]
    if chunk.metadata:
        pb.metadata.update(chunk.metadata)
    return pb


def chunks_to_pb(chunks: Sequence[runtime_chunks.Chunk]) -> list[cpb.Chunk]:
    return [chunk_to_pb(c) for c in chunks]
