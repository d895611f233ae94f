"""Hook arguments to the processor contract's calls, and its answers back to
what an in-process hook would have returned.

An answer that cannot be read (an unknown role, a replacement chunk of a kind
that cannot be replaced) raises `ProcessorStreamError`: the processor broke
the contract, which its `on_error` policy handles like a crash.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentd.grpc.chunks import FINISH_REASONS, chunk_to_pb, usage_to_pb
from agentd.grpc.messages import message_from_pb, message_to_pb
from agentd.grpc.options import model_settings_from_pb, tool_choice_from_pb
from agentd.grpc.parts import content_part_from_pb, tool_call_to_pb
from agentd.grpc.signals import attributes_from_pb
from agentd.grpc.values import from_struct, from_value, optional_struct, to_struct, to_value
from agentd.grpc.violations import Violations
from agentd.remote.session import ProcessorStreamError
from agentd.runtime import chunks as rc
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import Message
from agentd.runtime.models.base import ModelEvent, ModelFinish
from agentd.runtime.processors.base import (
    APIErrorResult,
    LLMRequestResult,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    ProcessInputStepArgs,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
    ProcessToolResultArgs,
    StepOverrides,
)
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import processor_service_pb2 as ppb
from agentd_proto.v1 import signal_pb2 as spb


def _messages(messages: Sequence[Message]) -> list[mpb.Message]:
    return [message_to_pb(m) for m in messages]


def _json_safe(value: Any) -> Any:
    try:
        return to_value(value)
    except (TypeError, ValueError):
        return to_value(repr(value))


# ---------------------------------------------------------------- calls


def input_call(args: ProcessInputArgs) -> ppb.HookCall:
    return ppb.HookCall(
        process_input=ppb.ProcessInputCall(
            messages=_messages(args.messages), system_messages=_messages(args.system_messages)
        )
    )


def input_step_call(args: ProcessInputStepArgs) -> ppb.HookCall:
    return ppb.HookCall(
        process_input_step=ppb.ProcessInputStepCall(
            messages=_messages(args.messages),
            system_messages=_messages(args.system_messages),
            step_number=args.step_number,
            model=args.model,
            tool_names=sorted(args.tools),
            active_tools=None if args.active_tools is None else opb.ToolNames(names=args.active_tools),
        )
    )


def llm_request_call(args: ProcessLLMRequestArgs) -> ppb.HookCall:
    return ppb.HookCall(
        process_llm_request=ppb.ProcessLLMRequestCall(
            prompt=_messages(args.prompt), model=args.model, step_number=args.step_number
        )
    )


def _event_chunks(events: Sequence[ModelEvent], run_id: str) -> list[cpb.Chunk]:
    # The step's own finish is not a chunk; everything else the model said is.
    return [
        chunk_to_pb(rc.Chunk(e, run_id, 0))
        for e in events
        if not isinstance(e, ModelFinish) and (type(e) in _REPLACEABLE or isinstance(e, rc.ToolCall))
    ]


def llm_response_call(args: ProcessLLMResponseArgs) -> ppb.HookCall:
    return ppb.HookCall(
        process_llm_response=ppb.ProcessLLMResponseCall(
            chunks=_event_chunks(args.chunks, args.run_id),
            model=args.model,
            step_number=args.step_number,
            from_cache=args.from_cache,
        )
    )


def output_stream_call(parts: Sequence[rc.Chunk]) -> ppb.HookCall:
    return ppb.HookCall(process_output_stream=ppb.ProcessOutputStreamCall(parts=[chunk_to_pb(p) for p in parts]))


def output_step_call(args: ProcessOutputStepArgs) -> ppb.HookCall:
    return ppb.HookCall(
        process_output_step=ppb.ProcessOutputStepCall(
            messages=_messages(args.messages),
            system_messages=_messages(args.system_messages),
            step_number=args.step_number,
            finish_reason=FINISH_REASONS[args.finish_reason or "unknown"],
            text=args.text,
            usage=usage_to_pb(args.usage),
            tool_calls=[tool_call_to_pb(c) for c in args.tool_calls],
        )
    )


def output_result_call(args: ProcessOutputResultArgs) -> ppb.HookCall:
    return ppb.HookCall(
        process_output_result=ppb.ProcessOutputResultCall(
            messages=_messages(args.messages),
            system_messages=_messages(args.system_messages),
            text=args.result.text,
            usage=usage_to_pb(args.result.usage),
            finish_reason=FINISH_REASONS[args.result.finish_reason],
        )
    )


def tool_result_call(args: ProcessToolResultArgs) -> ppb.HookCall:
    return ppb.HookCall(
        process_tool_result=ppb.ProcessToolResultCall(
            messages=_messages(args.messages),
            step_number=args.step_number,
            tool_name=args.tool_name,
            tool_call_id=args.tool_call_id,
            args=_json_safe(args.args),
            result=_json_safe(args.result),
            provider_executed=args.provider_executed,
        )
    )


def api_error_call(args: ProcessAPIErrorArgs) -> ppb.HookCall:
    error = args.error
    return ppb.HookCall(
        process_api_error=ppb.ProcessAPIErrorCall(
            messages=_messages(args.messages),
            step_number=args.step_number,
            error=cpb.ErrorChunk(
                message=str(error),
                reason=str(getattr(error, "reason", "") or "MODEL_ERROR"),
                status_code=int(getattr(error, "status_code", 0) or 0),
                provider_code=str(getattr(error, "provider_code", "") or ""),
                retryable=bool(getattr(error, "retryable", False)),
            ),
        )
    )


# ---------------------------------------------------------------- answers


def _read_messages(pbs: Sequence[mpb.Message]) -> list[Message]:
    try:
        return [message_from_pb(m) for m in pbs]
    except (KeyError, ValueError) as exc:
        raise ProcessorStreamError(f"answered a message agentd cannot read: {exc}") from None


def messages_result(answer: ppb.HookAnswer) -> Any:
    """What a message hook returns: None (unchanged), a list, or a dict with system messages."""
    if answer.WhichOneof("result") != "messages":
        return None
    result = answer.messages
    messages = _read_messages(result.messages)
    if result.HasField("system_messages"):
        return {"messages": messages, "system_messages": _read_messages(result.system_messages.messages)}
    return messages


def step_result(answer: ppb.HookAnswer) -> StepOverrides | list[Message] | None:
    which = answer.WhichOneof("result")
    if which == "messages":
        return _read_messages(answer.messages.messages)
    if which != "step":
        return None
    step = answer.step
    v = Violations()
    out = StepOverrides(
        model=step.model or None,
        active_tools=tuple(step.active_tools.names) if step.HasField("active_tools") else None,
        tool_choice=tool_choice_from_pb(step.tool_choice, "step.tool_choice", v)
        if step.HasField("tool_choice")
        else None,
        model_settings=model_settings_from_pb(step.model_settings, "step.model_settings", v)
        if step.HasField("model_settings")
        else None,
        provider_options=optional_struct(step, "provider_options"),
    )
    if step.HasField("messages"):
        out.messages = _read_messages(step.messages.messages)
        if step.messages.HasField("system_messages"):
            out.system_messages = _read_messages(step.messages.system_messages.messages)
    try:
        v.check()
    except InvalidArgument as exc:
        raise ProcessorStreamError(f"answered step overrides agentd cannot take: {exc}") from None
    return out


def llm_request_result(answer: ppb.HookAnswer) -> LLMRequestResult | None:
    if answer.WhichOneof("result") != "prompt":
        return None
    return LLMRequestResult(prompt=_read_messages(answer.prompt.messages))


def api_error_result(answer: ppb.HookAnswer) -> APIErrorResult | None:
    if answer.WhichOneof("result") != "api_error":
        return None
    return APIErrorResult(retry=answer.api_error.retry)


#: The payloads a processor may put in place of a streamed part.
_REPLACEABLE: dict[type, str] = {
    rc.TextStart: "text_start",
    rc.TextDelta: "text_delta",
    rc.TextEnd: "text_end",
    rc.ReasoningStart: "reasoning_start",
    rc.ReasoningDelta: "reasoning_delta",
    rc.ReasoningEnd: "reasoning_end",
    rc.Data: "data",
    rc.ObjectPartial: "object",
}


def payload_from_pb(pb: cpb.Chunk) -> rc.Payload:
    kind = pb.WhichOneof("payload")
    if kind == "text_start":
        return rc.TextStart(pb.text_start.id, optional_struct(pb.text_start, "provider_metadata"))
    if kind == "text_delta":
        d = pb.text_delta
        return rc.TextDelta(d.id, d.text, optional_struct(d, "provider_metadata"))
    if kind == "text_end":
        return rc.TextEnd(pb.text_end.id, optional_struct(pb.text_end, "provider_metadata"))
    if kind == "reasoning_start":
        return rc.ReasoningStart(pb.reasoning_start.id, optional_struct(pb.reasoning_start, "provider_metadata"))
    if kind == "reasoning_delta":
        r = pb.reasoning_delta
        return rc.ReasoningDelta(r.id, r.text, optional_struct(r, "provider_metadata"))
    if kind == "reasoning_end":
        e = pb.reasoning_end
        return rc.ReasoningEnd(e.id, provider_metadata=optional_struct(e, "provider_metadata"))
    if kind == "data":
        return data_payload(pb.data)
    if kind == "object":
        return rc.ObjectPartial(from_value(pb.object.object))
    kinds = ", ".join(_REPLACEABLE.values())
    raise ProcessorStreamError(f"answered a {kind or 'empty'} chunk; a processor may emit {kinds}")


def data_payload(pb: cpb.DataChunk) -> rc.Data:
    if not pb.type.startswith("data-"):
        raise ProcessorStreamError(f"answered a data chunk of type {pb.type!r}; custom types start with 'data-'")
    return rc.Data(pb.type, from_value(pb.data) if pb.HasField("data") else None, pb.id or None, pb.transient)


def replaced(original: rc.Chunk, pb: cpb.Chunk) -> rc.Chunk:
    """The original chunk with the processor's payload (run id, seq and source stay agentd's)."""
    return rc.Chunk(
        payload_from_pb(pb),
        original.run_id,
        original.seq,
        parent_run_id=original.parent_run_id,
        source=original.source,
        metadata=from_struct(pb.metadata) if pb.HasField("metadata") else original.metadata,
    )


def emitted(original: rc.Chunk, pb: cpb.Chunk) -> rc.Chunk:
    return rc.Chunk(payload_from_pb(pb), original.run_id, 0, metadata=optional_struct(pb, "metadata") or {})


def signal_kwargs(pb: spb.SignalInput) -> dict[str, Any]:
    """`send_signal(**kwargs)` for a signal the processor sent."""
    contents: Any = [content_part_from_pb(p) for p in pb.parts] if pb.parts else pb.text
    return {
        "type": pb.type or "reactive",
        "contents": contents,
        "tag_name": pb.tag_name or None,
        "attributes": attributes_from_pb(pb.attributes) or None,
        "metadata": optional_struct(pb, "metadata"),
        "transient": pb.transient if pb.HasField("transient") else None,
        "id": pb.id or None,
    }


def open_config(config: dict[str, Any]) -> Any:
    return to_struct(config)
