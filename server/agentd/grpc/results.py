"""A finished run (RunResult and its steps) to GenerateResponse."""

from __future__ import annotations

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from agentd.grpc.chunks import FINISH_REASONS, fill_usage, tripwire_to_pb
from agentd.grpc.messages import add_message
from agentd.grpc.parts import tool_call_to_pb, tool_result_to_pb
from agentd.grpc.values import to_value
from agentd.runtime.run import RunResult, StepResult
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import usage_pb2 as upb

# Fields are set only when they hold something, and one by one: with upb a
# field named in the constructor (or in add()) costs more than the same field
# set afterwards. Sub-messages are filled where they go: one built apart and
# set is copied in (encoded and decoded again).


def add_step(into: RepeatedCompositeFieldContainer[apb.StepResult], step: StepResult) -> upb.Usage:
    """Adds `step` to a repeated field, built where it goes; answers its usage
    as written (the run's usage is its last step's: copied, not written again)."""
    out = into.add()
    if step.step_number:
        out.step_number = step.step_number
    out.finish_reason = FINISH_REASONS[step.finish_reason]
    out.model = step.model
    usage = out.usage
    fill_usage(usage, step.usage)
    if step.tripwire is None:
        out.text = step.text
    else:
        out.tripwire.CopyFrom(tripwire_to_pb(step.tripwire))
    if step.reasoning_text:
        out.reasoning_text = step.reasoning_text
    if step.tool_calls:
        out.tool_calls.extend([tool_call_to_pb(c) for c in step.tool_calls])
    if step.tool_results:
        out.tool_results.extend([tool_result_to_pb(r) for r in step.tool_results])
    if step.warnings:
        out.warnings.extend(step.warnings)
    return usage


def result_to_pb(result: RunResult) -> apb.GenerateResponse:
    out = apb.GenerateResponse()
    out.run_id = result.run_id
    out.text = result.text
    out.finish_reason = FINISH_REASONS[result.finish_reason]
    out.model = result.model
    if result.tripwire is not None:
        out.tripwire.CopyFrom(tripwire_to_pb(result.tripwire))
    steps = out.steps
    # The run's tool calls and results are its steps' (RunResult lists them
    # afresh each time it is asked): asked only when a step has some.
    tools = False
    usage = None
    for step in result.steps:
        usage = add_step(steps, step)
        if step.tool_calls or step.tool_results:
            tools = True
    # The run's usage is its last step's (RunResult.add_up), and its total is
    # that same Usage when nothing else was summed in (one step, no
    # structuring model): a copy in C costs less than writing each counter
    # again from Python.
    if usage is not None and result.usage is result.steps[-1].usage:
        out.usage.CopyFrom(usage)
    else:
        fill_usage(out.usage, result.usage)
    if result.total_usage is result.usage:
        out.total_usage.CopyFrom(out.usage)
    else:
        fill_usage(out.total_usage, result.total_usage)
    messages = out.response_messages
    for message in result.response_messages:
        add_message(messages, message)
    if result.reasoning_text:
        out.reasoning_text = result.reasoning_text
    if result.raw_finish_reason:
        out.raw_finish_reason = result.raw_finish_reason
    if tools:
        out.tool_calls.extend([tool_call_to_pb(c) for c in result.tool_calls])
        out.tool_results.extend([tool_result_to_pb(r) for r in result.tool_results])
    if result.object is not None:
        out.object.CopyFrom(to_value(result.object))
    if result.warnings:
        out.warnings.extend(result.warnings)
    if result.thread_id:
        out.thread_id = result.thread_id
    if result.resource_id:
        out.resource_id = result.resource_id
    return out
