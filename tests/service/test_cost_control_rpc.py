"""token-cost-control over gRPC: warnAtPercent before the budget trips, the
violation message template, `threshold` and `breakdown` on the tripwire, the
user / organization / session scopes, a limit that depends on the request
(a table in the call's options, a function from an --app module), and an async
on_violation that is awaited."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from agentd.runtime import Agent, ProcessorViolation, TokenCostControl, Tool
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from support.errors import rich_error
from support.server import Running, serving
from support.wire import lane, scripted

#: USD per million tokens: a scripted step of 1000 input and 500 output tokens costs $0.002.
PRICES = {"local/scripted": {"input": 1.0, "output": 2.0}}
COST_LOGGER = "agentd.processors.token_cost_control"


class Seen:
    """An async on_violation: it records only once it has been awaited past a suspension."""

    def __init__(self) -> None:
        self.violations: list[ProcessorViolation] = []

    async def __call__(self, violation: ProcessorViolation) -> None:
        await asyncio.sleep(0)
        self.violations.append(violation)


def guarded(agent_id: str, control: TokenCostControl) -> Agent:
    """One instance in both lanes: it checks before each call and counts after each response."""
    return Agent(
        id=agent_id,
        model="local/scripted",
        tools=[Tool("noop", "Does nothing", lambda args: "done")],
        input_processors=[control],
        output_processors=[control],
        error_processor_defaults=False,
    )


def by_tier(context: Mapping[str, Any]) -> float:
    return 0.01 if context.get("tier") == "pro" else 0.002


@pytest.fixture
def seen() -> dict[str, Seen]:
    return {"warned": Seen(), "blocked": Seen()}


@pytest.fixture
async def server(seen: dict[str, Seen]) -> AsyncIterator[Running]:
    warned = TokenCostControl(max_tokens=3000, warn_at_percent=50)
    warned.on_violation = seen["warned"]
    blocked = TokenCostControl(max_tokens=1500)
    blocked.on_violation = seen["blocked"]
    tiered = TokenCostControl(max_cost=by_tier, prices=PRICES)
    agents = [
        guarded("warned", warned),
        guarded("blocked", blocked),
        guarded("tiered", tiered),
        Agent(
            id="plain",
            model="local/scripted",
            tools=[Tool("noop", "Does nothing", lambda args: "done")],
            error_processor_defaults=False,
        ),
    ]
    async with serving(agents, prices=PRICES) as running:
        yield running


def step(tool: bool = False) -> dict[str, Any]:
    usage = {"inputTokens": 1000, "outputTokens": 500}
    if tool:
        return {"toolCalls": [{"id": "c", "name": "noop", "args": {}}], "usage": usage}
    return {"text": "ok", "usage": usage}


def options(*steps: dict[str, Any], context: dict[str, Any] | None = None, **control: Any) -> opb.ExecutionOptions:
    """A script, the request context, and (given options) token-cost-control in both lanes."""
    result = scripted(*steps)
    if context is not None:
        request_context = struct_pb2.Struct()
        request_context.update(context)
        result.request_context.CopyFrom(request_context)
    if control:
        guard = lane(("token-cost-control", control))
        result.input_processors.CopyFrom(guard)
        result.output_processors.CopyFrom(guard)
    return result


async def generate(running: Running, agent: str, opts: opb.ExecutionOptions) -> apb.GenerateResponse:
    reply: apb.GenerateResponse = await running.agents.Generate(
        apb.GenerateRequest(agent_id=agent, text="go", options=opts)
    )
    return reply


def metadata(reply: apb.GenerateResponse) -> dict[str, Any]:
    return json_format.MessageToDict(reply.tripwire.metadata)


async def test_warn_at_percent_warns_once_before_the_budget_trips(
    server: Running, seen: dict[str, Seen], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, COST_LOGGER)
    reply = await generate(server, "warned", options(step(True), step(True), step(True), step()))
    assert reply.tripwire.reason == "Token cost control: token limit reached (3000/3000)"
    assert len(reply.steps) == 2
    soft, hard = seen["warned"].violations
    assert soft.message == "Token cost control: token usage reached 50% of the limit (1500/3000)"
    assert (soft.detail["threshold"], soft.detail["usage"]["tokens"]) == ("soft", 1500)
    assert hard.message == reply.tripwire.reason and hard.detail["threshold"] == "hard"
    assert [r.getMessage() for r in caplog.records if "50% of the limit" in r.getMessage()] == [
        f"{soft.message} (run {reply.run_id})"
    ]


async def test_an_async_on_violation_is_awaited(server: Running, seen: dict[str, Seen]) -> None:
    reply = await generate(server, "blocked", options(step(True), step()))
    assert reply.tripwire.processor_id == "token-cost-control"
    assert [v.message for v in seen["blocked"].violations] == [reply.tripwire.reason]


async def test_a_message_template_and_the_threshold_on_the_tripwire(server: Running) -> None:
    opts = options(
        step(True),
        step(),
        context={"userId": "template"},
        maxTokens=1500,
        scope="user",
        message="Budget of {limit} {kind}s spent: {usage} used ({scope})",
    )
    reply = await generate(server, "plain", opts)
    assert reply.tripwire.reason == "Budget of 1500 tokens spent: 1500 used (user)"
    meta = metadata(reply)
    assert (meta["threshold"], meta["limitType"], meta["scopeKey"]) == ("hard", "token", "template")
    assert "breakdown" not in meta


async def test_include_breakdown_lists_usage_per_model(server: Running) -> None:
    opts = options(
        step(True), step(), context={"userId": "breakdown"}, maxCost=0.002, scope="user", includeBreakdown=True
    )
    meta = metadata(await generate(server, "plain", opts))
    assert meta["limitType"] == "cost"
    assert meta["breakdown"] == [{"provider": "local", "model": "local/scripted", "tokens": 1500, "cost": 0.002}]


@pytest.mark.parametrize(
    ("scope", "key"), [("user", "userId"), ("organization", "organizationId"), ("session", "sessionId")]
)
async def test_user_organization_and_session_scopes(server: Running, scope: str, key: str) -> None:
    def run(who: str) -> opb.ExecutionOptions:
        return options(step(), context={key: who}, maxTokens=1500, scope=scope)

    first = await generate(server, "plain", run(f"{scope}-alice"))
    assert not first.HasField("tripwire")
    again = await generate(server, "plain", run(f"{scope}-alice"))
    meta = metadata(again)
    assert (meta["scope"], meta["scopeKey"]) == (scope, f"{scope}-alice")
    other = await generate(server, "plain", run(f"{scope}-bob"))
    assert not other.HasField("tripwire")


async def test_max_cost_from_a_table_keyed_by_the_request_context(server: Running) -> None:
    table = {"by": "tier", "limits": {"pro": 0.01}, "default": 0.002}

    def run(user: str, tier: str | None) -> opb.ExecutionOptions:
        context = {"userId": user, **({"tier": tier} if tier else {})}
        return options(step(True), step(True), step(), context=context, maxCost=table, scope="user")

    pro = await generate(server, "plain", run("table-pro", "pro"))
    assert not pro.HasField("tripwire") and len(pro.steps) == 3
    for user, tier in (("table-free", "free"), ("table-none", None), ("table-gold", "gold")):
        reply = await generate(server, "plain", run(user, tier))  # unnamed tiers get the default
        assert reply.tripwire.reason == "Token cost control: cost limit reached ($0.002/$0.002)", user
        assert metadata(reply)["limit"] == {"cost": 0.002}


async def test_max_cost_from_a_function_of_the_request_context(server: Running) -> None:
    script = (step(True), step(True), step())
    pro = await generate(server, "tiered", options(*script, context={"tier": "pro"}))
    assert not pro.HasField("tripwire")
    free = await generate(server, "tiered", options(*script, context={"tier": "free"}))
    assert free.tripwire.reason == "Token cost control: cost limit reached ($0.002/$0.002)"


@pytest.mark.parametrize(
    ("control", "needle"),
    [
        ({"maxCost": {"by": "tier", "limits": {"pro": 1}}}, "maxCost.default is required"),
        ({"maxTokens": 10, "warnAtPercent": 120}, "warnAtPercent"),
        ({"maxTokens": 10, "scope": "tenant"}, "scope must be one of"),
    ],
)
async def test_bad_options_are_invalid_argument(server: Running, control: dict[str, Any], needle: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await generate(server, "plain", options(step(), **control))
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.input_processors.processors[0].processor.options" in err.violations
    assert needle in info.value.details()
