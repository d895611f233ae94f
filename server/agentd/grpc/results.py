"""A finished run (RunResult and its steps) to GenerateResponse."""

from __future__ import annotations

from agentd.grpc.chunks import FINISH_REASONS, tripwire_to_pb, usage_to_pb
from agentd.grpc.messages import message_to_pb
from agentd.grpc.parts import tool_call_to_pb, tool_result_to_pb
from agentd.grpc.values import to_value
from agentd.runtime.run import RunResult, StepResult
from agentd_proto.v1 import agent_service_pb2 as apb


def step_to_pb(step: StepResult) -> apb.StepResult:
    return apb.StepResult(
        step_number=step.step_number,
        text=step.text if step.tripwire is None else "",
        reasoning_text=step.reasoning_text,
        finish_reason=FINISH_REASONS[step.finish_reason],
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
        finish_reason=FINISH_REASONS[result.finish_reason],
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
