"""A finished run to GenerateResponse: the reply's tool calls and results are
those of its steps that no tripwire stopped, and each usage is present with
exactly the counters reported."""

from __future__ import annotations

from dataclasses import fields

import pytest

from agentd.grpc.chunks import fill_usage
from agentd.grpc.results import result_to_pb
from agentd.runtime.chunks import Tripwire, Usage
from agentd.runtime.messages import ToolCallPart, ToolResultPart
from agentd.runtime.results import RunResult, StepResult
from agentd_proto.v1 import agent_service_pb2 as apb

COUNTERS = [f.name for f in fields(Usage)]


def call(n: int) -> ToolCallPart:
    return ToolCallPart(f"c{n}", "lookup", {"n": n})


def outcome(n: int) -> ToolResultPart:
    return ToolResultPart(f"c{n}", "lookup", {"found": n})


def test_the_reply_lists_the_tools_of_its_untripped_steps_in_order() -> None:
    steps = [
        StepResult(step_number=0, finish_reason="tool-calls", tool_calls=[call(1)], tool_results=[outcome(1)]),
        StepResult(step_number=1, finish_reason="tripwire", tool_calls=[call(2)], tripwire=Tripwire("blocked")),
        StepResult(step_number=2, finish_reason="tool-calls", tool_results=[outcome(3)]),
        StepResult(step_number=3, finish_reason="stop", text="done"),
    ]
    reply = result_to_pb(RunResult(run_id="r", agent_id="a", text="done", finish_reason="stop", steps=steps))
    assert [c.tool_call_id for c in reply.tool_calls] == ["c1"]
    assert [r.tool_call_id for r in reply.tool_results] == ["c1", "c3"]
    assert [s.step_number for s in reply.steps] == [0, 1, 2, 3]
    assert [len(s.tool_calls) for s in reply.steps] == [1, 1, 0, 0]  # a tripped step keeps its own
    assert reply.steps[1].HasField("tripwire") and not reply.steps[1].text


def test_a_reply_without_tools_lists_none() -> None:
    steps = [StepResult(step_number=0, finish_reason="stop", text="hi")]
    reply = result_to_pb(RunResult(run_id="r", agent_id="a", text="hi", finish_reason="stop", steps=steps))
    assert not reply.tool_calls and not reply.tool_results


@pytest.mark.parametrize("reported", [[], *[[name] for name in COUNTERS], COUNTERS[1:]], ids=repr)
def test_a_usage_is_present_with_exactly_its_reported_counters(reported: list[str]) -> None:
    reply = apb.GenerateResponse()
    fill_usage(reply.usage, Usage(**{name: 7 for name in reported}))
    assert reply.HasField("usage")
    assert [name for name in COUNTERS if reply.usage.HasField(name)] == reported
    assert all(getattr(reply.usage, name) == 7 for name in reported)
