"""Runtime values to protobuf messages and back. No validation here (see validate.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from google.protobuf import json_format, struct_pb2, timestamp_pb2

from agentd.runtime import chunks as rc
from agentd.runtime import messages as rm
from agentd.runtime.run import RunResult, StepResult
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import usage_pb2 as upb

# ---------------------------------------------------------------- JSON values


def to_value(obj: Any) -> struct_pb2.Value:
    value = struct_pb2.Value()
    if obj is None:
        value.null_value = struct_pb2.NULL_VALUE
    elif isinstance(obj, bool):
        value.bool_value = obj
    elif isinstance(obj, (int, float)):
        value.number_value = obj
    elif isinstance(obj, str):
        value.string_value = obj
    elif isinstance(obj, dict):
        value.struct_value.update(obj)
    elif isinstance(obj, (list, tuple)):
        value.list_value.extend(obj)
    else:
        value.string_value = str(obj)
    return value


def from_value(value: struct_pb2.Value) -> Any:
    return json_format.MessageToDict(value)


def to_struct(obj: dict[str, Any] | None) -> struct_pb2.Struct | None:
    if not obj:
        return None
    struct = struct_pb2.Struct()
    struct.update(obj)
    return struct


def from_struct(struct: struct_pb2.Struct) -> dict[str, Any]:
    return json_format.MessageToDict(struct)


def to_timestamp(when: datetime | None) -> timestamp_pb2.Timestamp | None:
    if when is None:
        return None
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(when.astimezone(UTC))
    return ts


def from_timestamp(ts: timestamp_pb2.Timestamp) -> datetime:
    return ts.ToDatetime(tzinfo=UTC)


# ---------------------------------------------------------------- enums

FINISH_REASONS: dict[str, int] = {
    "stop": upb.FINISH_REASON_STOP,
    "length": upb.FINISH_REASON_LENGTH,
    "content-filter": upb.FINISH_REASON_CONTENT_FILTER,
    "tool-calls": upb.FINISH_REASON_TOOL_CALLS,
    "error": upb.FINISH_REASON_ERROR,
    "other": upb.FINISH_REASON_OTHER,
    "unknown": upb.FINISH_REASON_UNKNOWN,
    "tripwire": upb.FINISH_REASON_TRIPWIRE,
    "retry": upb.FINISH_REASON_RETRY,
}
ROLES: dict[str, int] = {
    "user": mpb.ROLE_USER,
    "assistant": mpb.ROLE_ASSISTANT,
    "system": mpb.ROLE_SYSTEM,
    "signal": mpb.ROLE_SIGNAL,
}
ROLE_NAMES: dict[int, rm.Role] = {v: k for k, v in ROLES.items()}  # type: ignore[misc]
SOURCES: dict[str, int] = {
    "agent": cpb.CHUNK_SOURCE_AGENT,
    "user": cpb.CHUNK_SOURCE_USER,
    "system": cpb.CHUNK_SOURCE_SYSTEM,
    "workflow": cpb.CHUNK_SOURCE_WORKFLOW,
}


def usage_to_pb(usage: rc.Usage) -> upb.Usage:
    return upb.Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        reasoning_tokens=usage.reasoning_tokens,
        cached_input_tokens=usage.cached_input_tokens,
        cache_creation_input_tokens=usage.cache_creation_input_tokens,
    )


def tripwire_to_pb(tripwire: rc.Tripwire | None) -> cpb.Tripwire | None:
    if tripwire is None:
        return None
    return cpb.Tripwire(
        reason=tripwire.reason,
        retry=tripwire.retry,
        metadata=to_struct(tripwire.metadata),
        processor_id=tripwire.processor_id or "",
    )


# ---------------------------------------------------------------- messages


def tool_call_to_pb(call: rm.ToolCallPart) -> mpb.ToolCall:
    return mpb.ToolCall(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        args=to_value(call.args),
        provider_executed=call.provider_executed,
        provider_metadata=to_struct(call.provider_metadata),
        client_tool=call.client_tool,
    )


def tool_result_to_pb(result: rm.ToolResultPart) -> mpb.ToolResult:
    return mpb.ToolResult(
        tool_call_id=result.tool_call_id,
        tool_name=result.tool_name,
        result=to_value(result.result),
        is_error=result.is_error,
        args=to_value(result.args),
        provider_executed=result.provider_executed,
        provider_metadata=to_struct(result.provider_metadata),
    )


def file_to_pb(part: rm.FilePart) -> mpb.FilePart:
    pb = mpb.FilePart(
        media_type=part.media_type,
        filename=part.filename or "",
        provider_options=to_struct(part.provider_options),
    )
    if part.data is not None:
        pb.data = part.data
    elif part.url is not None:
        pb.url = part.url
    return pb


def part_to_pb(part: rm.Part) -> mpb.Part:
    if isinstance(part, rm.TextPart):
        return mpb.Part(text=mpb.TextPart(text=part.text, provider_options=to_struct(part.provider_options)))
    if isinstance(part, rm.FilePart):
        return mpb.Part(file=file_to_pb(part))
    if isinstance(part, rm.ReasoningPart):
        return mpb.Part(
            reasoning=mpb.ReasoningPart(
                text=part.text,
                signature=part.signature or "",
                redacted_data=part.redacted_data or b"",
                provider_options=to_struct(part.provider_options),
            )
        )
    if isinstance(part, rm.ToolCallPart):
        return mpb.Part(tool_call=tool_call_to_pb(part))
    if isinstance(part, rm.ToolResultPart):
        return mpb.Part(tool_result=tool_result_to_pb(part))
    if isinstance(part, rm.DataPart):
        return mpb.Part(data=mpb.DataPart(type=part.type, id=part.id or "", data=to_value(part.data)))
    if isinstance(part, rm.SignalPart):
        from agentd.grpc.convert_signals import signal_to_pb  # it builds on this module

        return mpb.Part(signal=mpb.SignalPart(signal=signal_to_pb(part.signal)))
    raise TypeError(f"no protobuf form for part {part!r}")


def message_to_pb(message: rm.Message) -> mpb.Message:
    return mpb.Message(
        id=message.id,
        role=ROLES[message.role],  # type: ignore[arg-type]
        parts=[part_to_pb(p) for p in message.parts],
        metadata=to_struct(message.metadata),
        provider_options=to_struct(message.provider_options),
        thread_id=message.thread_id or "",
        resource_id=message.resource_id or "",
        create_time=to_timestamp(message.created_at),
    )


def part_from_pb(part: mpb.Part) -> rm.Part:
    kind = part.WhichOneof("part")
    if kind == "text":
        return rm.TextPart(part.text.text, _opt_struct(part.text, "provider_options"))
    if kind == "file":
        f = part.file
        return rm.FilePart(
            media_type=f.media_type,
            data=f.data if f.WhichOneof("source") == "data" else None,
            url=f.url if f.WhichOneof("source") == "url" else None,
            filename=f.filename or None,
            provider_options=_opt_struct(f, "provider_options"),
        )
    if kind == "reasoning":
        r = part.reasoning
        return rm.ReasoningPart(
            r.text, r.signature or None, r.redacted_data or None, _opt_struct(r, "provider_options")
        )
    if kind == "tool_call":
        c = part.tool_call
        return rm.ToolCallPart(
            c.tool_call_id,
            c.tool_name,
            from_value(c.args) if c.HasField("args") else None,
            c.provider_executed,
            _opt_struct(c, "provider_metadata"),
            c.client_tool,
        )
    if kind == "tool_result":
        t = part.tool_result
        return rm.ToolResultPart(
            t.tool_call_id,
            t.tool_name,
            from_value(t.result) if t.HasField("result") else None,
            t.is_error,
            from_value(t.args) if t.HasField("args") else None,
            t.provider_executed,
            _opt_struct(t, "provider_metadata"),
        )
    if kind == "data":
        d = part.data
        return rm.DataPart(d.type, from_value(d.data) if d.HasField("data") else None, d.id or None)
    raise ValueError(f"unsupported part {kind!r}")


def message_from_pb(message: mpb.Message) -> rm.Message:
    out = rm.Message(
        role=ROLE_NAMES[message.role],
        parts=[part_from_pb(p) for p in message.parts],
        metadata=from_struct(message.metadata) if message.HasField("metadata") else {},
        provider_options=_opt_struct(message, "provider_options"),
        thread_id=message.thread_id or None,
        resource_id=message.resource_id or None,
    )
    if message.id:
        out.id = message.id
    if message.HasField("create_time"):
        out.created_at = from_timestamp(message.create_time)
    return out


def _opt_struct(msg: Any, name: str) -> dict[str, Any] | None:
    return from_struct(getattr(msg, name)) if msg.HasField(name) else None


# ---------------------------------------------------------------- chunks


def _pm(meta: dict[str, Any] | None) -> struct_pb2.Struct | None:
    return to_struct(meta)


def _text_start(p: rc.TextStart) -> cpb.Chunk:
    return cpb.Chunk(text_start=cpb.TextStartChunk(id=p.id, provider_metadata=_pm(p.provider_metadata)))


def _text_delta(p: rc.TextDelta) -> cpb.Chunk:
    return cpb.Chunk(text_delta=cpb.TextDeltaChunk(id=p.id, text=p.text, provider_metadata=_pm(p.provider_metadata)))


def _text_end(p: rc.TextEnd) -> cpb.Chunk:
    return cpb.Chunk(text_end=cpb.TextEndChunk(id=p.id, provider_metadata=_pm(p.provider_metadata)))


def _start(p: rc.Start) -> cpb.Chunk:
    return cpb.Chunk(
        start=cpb.StartChunk(agent_id=p.agent_id, thread_id=p.thread_id or "", resource_id=p.resource_id or "")
    )


def _step_start(p: rc.StepStart) -> cpb.Chunk:
    return cpb.Chunk(
        step_start=cpb.StepStartChunk(
            step_number=p.step_number,
            message_id=p.message_id,
            model=p.model,
            start_time=to_timestamp(p.started_at),
            warnings=p.warnings,
        )
    )


def _reasoning_start(p: rc.ReasoningStart) -> cpb.Chunk:
    return cpb.Chunk(reasoning_start=cpb.ReasoningStartChunk(id=p.id, provider_metadata=_pm(p.provider_metadata)))


def _reasoning_delta(p: rc.ReasoningDelta) -> cpb.Chunk:
    return cpb.Chunk(
        reasoning_delta=cpb.ReasoningDeltaChunk(id=p.id, text=p.text, provider_metadata=_pm(p.provider_metadata))
    )


def _reasoning_end(p: rc.ReasoningEnd) -> cpb.Chunk:
    return cpb.Chunk(
        reasoning_end=cpb.ReasoningEndChunk(
            id=p.id,
            signature=p.signature or "",
            redacted_data=p.redacted_data or b"",
            provider_metadata=_pm(p.provider_metadata),
        )
    )


def _tool_call_start(p: rc.ToolCallStart) -> cpb.Chunk:
    return cpb.Chunk(
        tool_call_start=cpb.ToolCallStartChunk(
            tool_call_id=p.tool_call_id,
            tool_name=p.tool_name,
            provider_executed=p.provider_executed,
            provider_metadata=_pm(p.provider_metadata),
        )
    )


def _tool_call_delta(p: rc.ToolCallDelta) -> cpb.Chunk:
    return cpb.Chunk(
        tool_call_delta=cpb.ToolCallDeltaChunk(
            tool_call_id=p.tool_call_id, args_text_delta=p.args_text_delta, tool_name=p.tool_name or ""
        )
    )


def _tool_call_end(p: rc.ToolCallEnd) -> cpb.Chunk:
    return cpb.Chunk(tool_call_end=cpb.ToolCallEndChunk(tool_call_id=p.tool_call_id))


def _tool_call(p: rc.ToolCall) -> cpb.Chunk:
    return cpb.Chunk(tool_call=tool_call_to_pb(p.call))


def _tool_result(p: rc.ToolResult) -> cpb.Chunk:
    return cpb.Chunk(tool_result=tool_result_to_pb(p.result))


def _step_finish(p: rc.StepFinish) -> cpb.Chunk:
    return cpb.Chunk(
        step_finish=cpb.StepFinishChunk(
            step_number=p.step_number,
            message_id=p.message_id,
            finish_reason=FINISH_REASONS[p.finish_reason],  # type: ignore[arg-type]
            raw_finish_reason=p.raw_finish_reason or "",
            usage=usage_to_pb(p.usage),
            is_continued=p.is_continued,
            provider_metadata=_pm(p.provider_metadata),
            model=p.model,
            tripwire=tripwire_to_pb(p.tripwire),
            warnings=p.warnings,
        )
    )


def _finish(p: rc.Finish) -> cpb.Chunk:
    return cpb.Chunk(
        finish=cpb.FinishChunk(
            finish_reason=FINISH_REASONS[p.finish_reason],  # type: ignore[arg-type]
            raw_finish_reason=p.raw_finish_reason or "",
            usage=usage_to_pb(p.usage),
            total_usage=usage_to_pb(p.total_usage),
            response_messages=[message_to_pb(m) for m in p.response_messages],
            provider_metadata=_pm(p.provider_metadata),
            model=p.model,
            object=to_value(p.object) if p.object is not None else None,
            tripwire=tripwire_to_pb(p.tripwire),
        )
    )


def _error(p: rc.Error) -> cpb.Chunk:
    return cpb.Chunk(
        error=cpb.ErrorChunk(
            message=p.message,
            reason=p.reason,
            status_code=p.status_code or 0,
            provider_code=p.provider_code or "",
            retryable=p.retryable,
            details=_pm(p.details),
        )
    )


def _abort(p: rc.Abort) -> cpb.Chunk:
    return cpb.Chunk(abort=cpb.AbortChunk(reason=p.reason, message=p.message))


def _tripwire(p: rc.TripwireChunk) -> cpb.Chunk:
    return cpb.Chunk(tripwire=cpb.TripwireChunk(tripwire=tripwire_to_pb(p.tripwire)))


def _data(p: rc.Data) -> cpb.Chunk:
    return cpb.Chunk(data=cpb.DataChunk(type=p.type, id=p.id or "", data=to_value(p.data), transient=p.transient))


def _signal(p: rc.SignalEcho) -> cpb.Chunk:
    from agentd.grpc.convert_signals import signal_to_pb  # it builds on this module

    return cpb.Chunk(signal=cpb.SignalEchoChunk(signal=signal_to_pb(p.signal)))


def _file(p: rc.File) -> cpb.Chunk:
    return cpb.Chunk(file=cpb.FileChunk(file=file_to_pb(p.file)))


def _source(p: rc.Source) -> cpb.Chunk:
    return cpb.Chunk(
        source_ref=cpb.SourceChunk(
            id=p.id,
            source_type=p.source_type,
            title=p.title,
            url=p.url or "",
            media_type=p.media_type or "",
            filename=p.filename or "",
            provider_metadata=_pm(p.provider_metadata),
        )
    )


def _object(p: rc.ObjectPartial) -> cpb.Chunk:
    return cpb.Chunk(object=cpb.ObjectChunk(object=to_value(p.object)))


def _response_metadata(p: rc.ResponseMetadata) -> cpb.Chunk:
    return cpb.Chunk(
        response_metadata=cpb.ResponseMetadataChunk(
            response_id=p.response_id or "", model_id=p.model_id or "", time=to_timestamp(p.time)
        )
    )


_CHUNK_BUILDERS: dict[type, Callable[[Any], cpb.Chunk]] = {
    rc.Start: _start,
    rc.StepStart: _step_start,
    rc.TextStart: _text_start,
    rc.TextDelta: _text_delta,
    rc.TextEnd: _text_end,
    rc.ReasoningStart: _reasoning_start,
    rc.ReasoningDelta: _reasoning_delta,
    rc.ReasoningEnd: _reasoning_end,
    rc.ToolCallStart: _tool_call_start,
    rc.ToolCallDelta: _tool_call_delta,
    rc.ToolCallEnd: _tool_call_end,
    rc.ToolCall: _tool_call,
    rc.ToolResult: _tool_result,
    rc.StepFinish: _step_finish,
    rc.Finish: _finish,
    rc.Error: _error,
    rc.Abort: _abort,
    rc.TripwireChunk: _tripwire,
    rc.Data: _data,
    rc.SignalEcho: _signal,
    rc.File: _file,
    rc.Source: _source,
    rc.ObjectPartial: _object,
    rc.ResponseMetadata: _response_metadata,
}


def chunk_to_pb(chunk: rc.Chunk) -> cpb.Chunk:
    pb = _CHUNK_BUILDERS[type(chunk.payload)](chunk.payload)
    pb.run_id = chunk.run_id
    pb.seq = chunk.seq
    if chunk.parent_run_id:
        pb.parent_run_id = chunk.parent_run_id
    if chunk.offset:
        pb.offset = chunk.offset
    pb.source = SOURCES[chunk.source]  # type: ignore[assignment]
    if chunk.metadata:
        pb.metadata.update(chunk.metadata)
    return pb


def chunks_to_pb(chunks: Sequence[rc.Chunk]) -> list[cpb.Chunk]:
    return [chunk_to_pb(c) for c in chunks]


# ---------------------------------------------------------------- results


def step_to_pb(step: StepResult) -> apb.StepResult:
    return apb.StepResult(
        step_number=step.step_number,
        text=step.text if step.tripwire is None else "",
        reasoning_text=step.reasoning_text,
        finish_reason=FINISH_REASONS[step.finish_reason],  # type: ignore[arg-type]
        usage=usage_to_pb(step.usage),
        tool_calls=[tool_call_to_pb(c) for c in step.tool_calls],
        tool_results=[tool_result_to_pb(r) for r in step.tool_results],
        model=step.model,
        tripwire=tripwire_to_pb(step.tripwire),
        warnings=step.warnings,
    )


def result_to_pb(result: RunResult) -> apb.GenerateResponse:
    return apb.GenerateResponse(
        run_id=result.run_id,
        text=result.text,
        reasoning_text=result.reasoning_text,
        finish_reason=FINISH_REASONS[result.finish_reason],  # type: ignore[arg-type]
        raw_finish_reason=result.raw_finish_reason or "",
        usage=usage_to_pb(result.usage),
        total_usage=usage_to_pb(result.total_usage),
        steps=[step_to_pb(s) for s in result.steps],
        tool_calls=[tool_call_to_pb(c) for c in result.tool_calls],
        tool_results=[tool_result_to_pb(r) for r in result.tool_results],
        response_messages=[message_to_pb(m) for m in result.response_messages],
        object=to_value(result.object) if result.object is not None else None,
        tripwire=tripwire_to_pb(result.tripwire),
        model=result.model,
        warnings=result.warnings,
        thread_id=result.thread_id or "",
        resource_id=result.resource_id or "",
    )
