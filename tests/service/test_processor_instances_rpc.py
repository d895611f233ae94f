"""Processor instances over gRPC: two instances of one processor keep their
own state, one entry listed in two lanes keeps one, and integral options
arrive as integers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.runtime import Agent
from agentd.runtime.tools import Tool
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from support.server import Running, serving
from support.wire import lane

USAGE = {"inputTokens": 600, "outputTokens": 400}  # 1000 tokens a step


def noop(args: Any) -> str:
    return "ok"


@pytest.fixture
async def running() -> AsyncIterator[Running]:
    agents = [Agent(id="worker", model="local/scripted", tools=[Tool("noop", "Does nothing", noop)])]
    async with serving(agents) as running:
        yield running


def steps(n: int) -> list[dict[str, Any]]:
    """n tool-calling steps, then an answer; each step costs 1000 tokens."""
    calls = [{"toolCalls": [{"id": f"c{i}", "name": "noop"}], "usage": USAGE} for i in range(n)]
    return [*calls, {"text": "done", "usage": USAGE}]


async def generate(running: Running, script: list[dict[str, Any]], **lanes: opb.ProcessorList) -> apb.GenerateResponse:
    options = opb.ExecutionOptions(**lanes)
    options.provider_options.update({"local": {"script": script}})
    return await running.agents.Generate(apb.GenerateRequest(agent_id="worker", text="go", options=options))


async def test_two_guards_of_one_kind_each_count_the_run_once(running: Running) -> None:
    guards = lane(("token-cost-control", {"maxTokens": 2000}), ("token-cost-control", {"maxCost": 1000}))

    reply = await generate(running, steps(3), input_processors=guards, output_processors=guards)

    # 1000 tokens a step: the token guard trips before step 2, not before step 1
    # (two guards adding every step to one shared count made it 2000 a step).
    assert "token limit reached (2000/2000)" in reply.tripwire.reason
    assert len(reply.steps) == 2
    assert reply.tripwire.metadata["usage"]["tokens"] == 2000


async def test_two_warning_guards_each_report_their_own_violation(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    guards = lane(
        ("token-cost-control", {"maxTokens": 500, "strategy": "warn"}),
        ("token-cost-control", {"maxTokens": 800, "strategy": "warn"}),
    )
    with caplog.at_level(logging.WARNING, logger="agentd"):
        reply = await generate(running, steps(2), input_processors=guards, output_processors=guards)

    assert not reply.HasField("tripwire") and reply.text == "done"
    warned = [r.getMessage() for r in caplog.records if "limit reached" in r.getMessage()]
    assert len(warned) == 2, warned  # once each: a shared state let only the first one warn
    assert any("1000/500" in m for m in warned) and any("1000/800" in m for m in warned), warned


async def test_integral_options_arrive_as_integers(running: Running) -> None:
    """A Struct carries every number as a double: 0 is still a valid count."""
    reply = await generate(
        running,
        steps(1),
        input_processors=lane(("tool-call-filter", {"filterAfterToolSteps": 0}), ("token-limiter", {"limit": 5000})),
    )
    assert reply.text == "done"


async def test_two_guards_sharing_a_budget_count_each_step_once(running: Running) -> None:
    """Guards of one scope and window share one counter: each step is added to it once."""
    guards = lane(
        ("token-cost-control", {"maxTokens": 2000, "scope": "resource"}),
        ("token-cost-control", {"maxCost": 1000, "scope": "resource"}),
    )
    options = opb.ExecutionOptions(
        input_processors=guards, output_processors=guards, memory=opb.MemoryOptions(resource="u-budget")
    )
    options.provider_options.update({"local": {"script": steps(3)}})

    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="worker", text="go", options=options))

    assert "token limit reached (2000/2000)" in reply.tripwire.reason
    assert len(reply.steps) == 2  # two guards adding each step made it 2000 after step 0
