"""TokenCostControl and ToolSearchProcessor through the real agent loop: the local
scripted model (tool calls and usage scripted), InMemoryServerCaches on an
injected clock (no sleeping)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agentd.runtime import Agent, ExecutionOptions, MemoryOptions, ThreadRef, Tool
from agentd.runtime.agent_definition import RESOURCE_ID_KEY, THREAD_ID_KEY
from agentd.runtime.cache import CacheError, InMemoryServerCache
from agentd.runtime.models.local import LocalModel
from agentd.runtime.options import ProcessorSpec
from agentd.runtime.processors.base import ProcessorViolation
from agentd.runtime.processors.builtins import token_cost_control as tcc
from agentd.runtime.processors.builtins.response_cache import ResponseCache
from agentd.runtime.processors.builtins.token_cost_control import (
    Price,
    TokenCostControl,
    parse_prices,
    token_cost_control_factory,
)
from agentd.runtime.processors.builtins.tool_search import (
    LOAD_TOOL,
    SEARCH_TOOLS,
    ToolSearchProcessor,
    rank_tools,
    score_tool,
)
from agentd.runtime.processors.catalogue import BUILTIN_FACTORIES, default_registry
from agentd.runtime.run import RunResult
from support.clocks import Clock
from support.runs import script

HOUR = 3600.0
DAY = 86400.0
COST_LOGGER = "agentd.processors.token_cost_control"

# ---------------------------------------------------------------- helpers


@pytest.fixture
def clock() -> Clock:
    """Ten seconds into a day (the conftest's `cache` runs on this clock)."""
    return Clock(20_000 * DAY + 10.0)


def usage(input_tokens: int = 1000, output_tokens: int = 500) -> dict[str, int]:
    return {"inputTokens": input_tokens, "outputTokens": output_tokens}


def answer(text: str = "ok", **use: int) -> dict[str, Any]:
    return {"text": text, "usage": usage(**use)}


def call(name: str, args: dict[str, Any] | None = None, call_id: str | None = None, **use: int) -> dict[str, Any]:
    return {"toolCalls": [{"id": call_id or f"c-{name}", "name": name, "args": args or {}}], "usage": usage(**use)}


def options(*steps: dict[str, Any], resource: str | None = None, thread: str | None = None) -> ExecutionOptions:
    memory = None
    if resource is not None or thread is not None:
        memory = MemoryOptions(resource=resource, thread=ThreadRef(thread) if thread else None)
    return script(*steps, memory=memory)


def noop_tool() -> Tool:
    return Tool("noop", "Does nothing", lambda args: "done")


def cost_agent(processor: Any, *, tools: list[Tool] | None = None, agent_id: str = "budgeted") -> Agent:
    """The processor in both lanes (check before each call, count after each response)."""
    return Agent(
        id=agent_id,
        model="local/scripted",
        instructions="Be brief.",
        tools=tools or [noop_tool()],
        input_processors=[processor],
        output_processors=[processor],
        error_processor_defaults=False,
    )


class Violations:
    def __init__(self) -> None:
        self.seen: list[ProcessorViolation] = []

    def __call__(self, violation: ProcessorViolation) -> None:
        self.seen.append(violation)


def watched(processor: TokenCostControl) -> Violations:
    violations = Violations()
    processor.on_violation = violations
    return violations


async def run(agent: Agent, opts: ExecutionOptions, text: str = "hello") -> RunResult:
    result: RunResult = await agent.generate(text, opts)
    assert result.error is None, result.error
    return result


def cost_warnings(caplog: pytest.LogCaptureFixture, needle: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == COST_LOGGER and needle in r.getMessage()]


# ---------------------------------------------------------------- TokenCostControl: limits


async def test_run_scope_token_limit_trips_at_the_next_step_with_the_detail() -> None:
    control = TokenCostControl(max_tokens=2000)
    violations = watched(control)
    agent = cost_agent(control)
    script = (call("noop", call_id="a"), call("noop", call_id="b"), call("noop", call_id="c"), answer())

    result = await run(agent, options(*script))

    assert result.tripwire is not None
    assert result.tripwire.reason == "Token cost control: token limit reached (3000/2000)"
    assert result.tripwire.processor_id == "token-cost-control"
    assert [s.step_number for s in result.steps] == [0, 1]  # step 2 was never sent to the model
    meta = result.tripwire.metadata
    assert meta is not None
    assert meta["usage"] == {"tokens": 3000, "cost": 0.0}
    assert meta["limit"] == {"tokens": 2000}
    assert (meta["scope"], meta["scopeKey"], meta["limitType"], meta["window"]) == (
        "run",
        result.run_id,
        "token",
        None,
    )
    assert [v.message for v in violations.seen] == [result.tripwire.reason]  # block reports once
    assert violations.seen[0].processor_id == "token-cost-control"
    assert violations.seen[0].detail == meta

    # Run scope: the next run starts from zero.
    again = await run(agent, options(answer()))
    assert again.tripwire is None and again.text == "ok"


async def test_resource_scope_trips_on_the_next_run_and_not_for_other_resources(cache: InMemoryServerCache) -> None:
    control = TokenCostControl(cache, max_tokens=2000, scope="resource")
    violations = watched(control)
    agent = cost_agent(control)

    first = await run(agent, options(answer(), resource="u1"))
    second = await run(agent, options(answer(), resource="u1"))  # 1500 < 2000: allowed
    assert first.tripwire is None and second.tripwire is None
    third = await run(agent, options(answer(), resource="u1"))

    assert third.tripwire is not None
    assert third.tripwire.reason == "Token cost control: token limit reached (3000/2000)"
    assert third.steps == [] and third.text == ""
    meta = third.tripwire.metadata
    assert meta is not None
    assert (meta["scope"], meta["scopeKey"], meta["usage"]) == ("resource", "u1", {"tokens": 3000, "cost": 0.0})
    assert len(violations.seen) == 1

    other = await run(agent, options(answer(), resource="u2"))
    assert other.tripwire is None and other.text == "ok"
    # The counters, pinned, under the documented keys.
    assert sorted(await cache.keys("agentd:cost:")) == [
        "agentd:cost:resource:u1:all:tokens",
        "agentd:cost:resource:u2:all:tokens",
    ]
    assert await cache.get("agentd:cost:resource:u1:all:tokens") == 3000


async def test_resource_budget_is_shared_by_agents_and_trips_mid_run(cache: InMemoryServerCache) -> None:
    first = cost_agent(TokenCostControl(cache, max_tokens=2000, scope="resource"), agent_id="one")
    second = cost_agent(TokenCostControl(cache, max_tokens=2000, scope="resource"), agent_id="two")

    await run(first, options(answer(), resource="u1"))  # 1500
    result = await run(second, options(call("noop"), answer(), resource="u1"))  # step 0 allowed, step 1 not

    assert result.tripwire is not None
    assert result.tripwire.reason == "Token cost control: token limit reached (3000/2000)"
    assert len(result.steps) == 1 and result.tool_results[0].result == "done"


async def test_thread_scope_counts_per_thread(cache: InMemoryServerCache) -> None:
    agent = cost_agent(TokenCostControl(cache, max_tokens=1500, scope="thread"))

    assert (await run(agent, options(answer(), resource="u1", thread="t1"))).tripwire is None
    tripped = await run(agent, options(answer(), resource="u1", thread="t1"))
    assert tripped.tripwire is not None
    assert tripped.tripwire.metadata is not None and tripped.tripwire.metadata["scopeKey"] == "t1"
    assert (await run(agent, options(answer(), resource="u1", thread="t2"))).tripwire is None


async def test_missing_scope_id_falls_back_to_run_scope(cache: InMemoryServerCache) -> None:
    agent = cost_agent(TokenCostControl(cache, max_tokens=1500, scope="resource"))

    for _ in range(3):  # no resource: every run counts only itself
        assert (await run(agent, options(answer()))).tripwire is None
    result = await run(agent, options(call("noop"), answer()))
    assert result.tripwire is not None
    assert result.tripwire.metadata is not None and result.tripwire.metadata["scope"] == "run"
    assert await cache.keys("agentd:cost:") == []


async def test_cost_limit_uses_the_price_table(cache: InMemoryServerCache) -> None:
    prices = {"local/scripted": {"input": 1.0, "output": 2.0}}  # USD per million tokens
    control = TokenCostControl(cache, max_cost=0.003, scope="resource", prices=prices)
    agent = cost_agent(control)

    await run(agent, options(answer(), resource="u1"))  # 1000 * 1 + 500 * 2 = 2000 micro-dollars
    assert await cache.get("agentd:cost:resource:u1:all:cost") == 2000
    assert await cache.get("agentd:cost:resource:u1:all:tokens") == 1500
    await run(agent, options(answer(), resource="u1"))
    result = await run(agent, options(answer(), resource="u1"))

    assert result.tripwire is not None
    assert result.tripwire.reason == "Token cost control: cost limit reached ($0.004/$0.003)"
    meta = result.tripwire.metadata
    assert meta is not None
    assert meta["limitType"] == "cost"
    assert meta["usage"] == {"tokens": 3000, "cost": 0.004}
    assert meta["limit"] == {"cost": 0.003}


async def test_fractional_costs_round_up_per_step() -> None:
    price = Price(input=parse_prices({"a/b": {"input": 0.15}})["a/b"].input)
    from agentd.runtime.chunks import Usage

    assert price.micro_usd(Usage(input_tokens=1000, output_tokens=0)) == 150  # exact, no float noise
    assert price.micro_usd(Usage(input_tokens=3, output_tokens=0)) == 1  # 0.45 micro-dollars, rounded up
    assert Price().micro_usd(Usage(input_tokens=10**6, output_tokens=10**6)) == 0


async def test_unpriced_model_costs_nothing_and_logs_once(
    cache: InMemoryServerCache, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, COST_LOGGER)
    control = TokenCostControl(cache, max_cost=0.000001, scope="resource", prices={"local/echo": {"input": 1}})
    agent = cost_agent(control)

    for _ in range(3):
        assert (await run(agent, options(answer(), resource="u1"))).tripwire is None
    assert len(cost_warnings(caplog, "has no price")) == 1
    assert await cache.get("agentd:cost:resource:u1:all:tokens") == 4500
    assert await cache.get("agentd:cost:resource:u1:all:cost") is None


async def test_both_limits_check_tokens_first(cache: InMemoryServerCache) -> None:
    prices = {"local/scripted": {"input": 1.0, "output": 1.0}}
    agent = cost_agent(TokenCostControl(cache, max_tokens=1000, max_cost=0.001, scope="resource", prices=prices))
    await run(agent, options(answer(), resource="u1"))
    result = await run(agent, options(answer(), resource="u1"))
    assert result.tripwire is not None and result.tripwire.reason.startswith("Token cost control: token limit")
    assert result.tripwire.metadata is not None and result.tripwire.metadata["limit"] == {
        "tokens": 1000,
        "cost": 0.001,
    }


async def test_warn_reports_once_per_run_logs_once_and_lets_the_run_finish(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, COST_LOGGER)
    control = TokenCostControl(max_tokens=1000, strategy="warn")
    violations = watched(control)
    agent = cost_agent(control)
    script = (call("noop", call_id="a"), call("noop", call_id="b"), call("noop", call_id="c"), answer("finished"))

    result = await run(agent, options(*script))

    assert result.tripwire is None and result.text == "finished"
    assert len(result.steps) == 4  # steps 1, 2 and 3 were over the limit: warned once
    assert [v.message for v in violations.seen] == ["Token cost control: token limit reached (1500/1000)"]
    assert violations.seen[0].detail["strategy"] == "warn"
    assert len(cost_warnings(caplog, "token limit reached")) == 1


async def test_warn_once_per_run_not_once_per_processor(cache: InMemoryServerCache) -> None:
    control = TokenCostControl(cache, max_tokens=1000, scope="resource", strategy="warn")
    violations = watched(control)
    agent = cost_agent(control)
    await run(agent, options(answer(), resource="u1"))
    await run(agent, options(call("noop"), answer(), resource="u1"))
    await run(agent, options(answer(), resource="u1"))
    assert [v.message for v in violations.seen] == [
        "Token cost control: token limit reached (1500/1000)",
        "Token cost control: token limit reached (4500/1000)",
    ]


# ---------------------------------------------------------------- TokenCostControl: windows


async def test_fixed_window_resets_past_the_window(clock: Clock, cache: InMemoryServerCache) -> None:
    clock.now = 1000 * HOUR + 10  # 10 s into a fixed one-hour window
    agent = cost_agent(TokenCostControl(cache, max_tokens=2000, scope="resource", window="1h", clock=clock))

    await run(agent, options(answer(), resource="u1"))
    await run(agent, options(answer(), resource="u1"))
    clock.now = 1000 * HOUR + 3599  # still the same window
    tripped = await run(agent, options(answer(), resource="u1"))
    assert tripped.tripwire is not None
    window = tripped.tripwire.metadata["window"] if tripped.tripwire.metadata else None
    assert window == {
        "length": "1h",
        "seconds": 3600.0,
        "kind": "fixed",
        "start": "1970-02-11T16:00:00Z",
        "end": "1970-02-11T17:00:00Z",
    }

    clock.now = 1001 * HOUR  # the next window
    assert (await run(agent, options(answer(), resource="u1"))).tripwire is None
    assert (await run(agent, options(answer(), resource="u1"))).tripwire is None
    assert (await run(agent, options(answer(), resource="u1"))).tripwire is not None
    # The previous window's counter was pruned when the new window's was created.
    assert await cache.keys("agentd:cost:") == ["agentd:cost:resource:u1:fixed-3600s:1001:tokens"]


async def test_rolling_window_forgets_old_usage(clock: Clock, cache: InMemoryServerCache) -> None:
    start = clock.now = 50_000 * 60.0  # on a bucket boundary (buckets of 30m / 30 = 60 s)
    agent = cost_agent(
        TokenCostControl(cache, max_tokens=3000, scope="resource", window="30m", window_kind="rolling", clock=clock)
    )

    await run(agent, options(answer(), resource="u1"))  # 1500 at t0
    clock.now = start + 20 * 60
    await run(agent, options(answer(), resource="u1"))  # 1500 at t0 + 20 min
    clock.now = start + 29 * 60
    tripped = await run(agent, options(answer(), resource="u1"))  # both within the window: 3000
    assert tripped.tripwire is not None
    assert tripped.tripwire.reason == "Token cost control: token limit reached (3000/3000)"
    assert tripped.tripwire.metadata is not None
    assert tripped.tripwire.metadata["window"]["kind"] == "rolling"

    clock.now = start + 30 * 60  # the t0 usage has left the window; t0 + 20 min has not
    allowed = await run(agent, options(answer(), resource="u1"))
    assert allowed.tripwire is None
    clock.now = start + 31 * 60
    again = await run(agent, options(answer(), resource="u1"))
    assert again.tripwire is not None and "(3000/3000)" in again.tripwire.reason  # 20 min + 30 min usage

    clock.now = start + 61 * 60  # everything forgotten
    assert (await run(agent, options(answer(), resource="u1"))).tripwire is None
    buckets = {k.split(":")[-2] for k in await cache.keys("agentd:cost:resource:u1:")}
    assert buckets == {str(50_000 + 61)}  # buckets outside the window were pruned


async def test_counters_survive_lru_pressure_because_they_are_pinned(clock: Clock) -> None:
    small = InMemoryServerCache(max_size=5, clock=clock)
    agent = cost_agent(TokenCostControl(small, max_tokens=2000, scope="resource", window="30d", clock=clock))
    await run(agent, options(answer(), resource="u1"))
    await run(agent, options(answer(), resource="u1"))

    for i in range(50):
        await small.set(f"other:{i}", i)
    clock.now += 3 * HOUR  # past the default TTL of unpinned entries too

    assert await small.get("other:0") is None  # evicted
    tripped = await run(agent, options(answer(), resource="u1"))
    assert tripped.tripwire is not None and "(3000/2000)" in tripped.tripwire.reason


async def test_replayed_response_cache_steps_are_not_counted(cache: InMemoryServerCache) -> None:
    control = TokenCostControl(cache, max_tokens=10_000, scope="resource")
    agent = Agent(
        id="cached",
        model="local/scripted",
        input_processors=[ResponseCache(cache), control],
        output_processors=[control],
        error_processor_defaults=False,
    )
    await run(agent, options(answer(), resource="u1"), "same question")
    replay = await run(agent, options(answer(), resource="u1"), "same question")
    assert replay.steps[0].from_cache
    assert await cache.get("agentd:cost:resource:u1:all:tokens") == 1500


# ---------------------------------------------------------------- TokenCostControl: failures and set-up


class BrokenCache(InMemoryServerCache):
    async def get(self, key: str) -> Any:
        raise CacheError("down")

    async def increment(self, key: str, by: int = 1, ttl: float | None = None) -> int:
        raise CacheError("down")


async def test_cache_errors_fail_open(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, COST_LOGGER)
    agent = cost_agent(TokenCostControl(BrokenCache(), max_tokens=1, scope="resource"))
    for _ in range(2):
        result = await run(agent, options(answer(), resource="u1"))
        assert result.tripwire is None and result.text == "ok"
    assert cost_warnings(caplog, "not checked")
    assert cost_warnings(caplog, "that usage is lost")


async def test_input_lane_only_logs_that_nothing_is_counted(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, COST_LOGGER)
    control = TokenCostControl(max_tokens=1)
    agent = Agent(
        id="half",
        model="local/scripted",
        tools=[noop_tool()],
        input_processors=[control],
        error_processor_defaults=False,
    )
    await run(agent, options(call("noop"), answer()))
    await run(agent, options(call("noop"), answer()))
    assert len(cost_warnings(caplog, "output lane")) == 1


def test_request_context_keys_match_the_run() -> None:
    assert (tcc.RESOURCE_ID_KEY, tcc.THREAD_ID_KEY) == (RESOURCE_ID_KEY, THREAD_ID_KEY)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "set maxCost and/or maxTokens"),
        ({"max_tokens": 0}, "greater than 0"),
        ({"max_tokens": 1.5}, "whole number"),
        ({"max_cost": -1}, "greater than 0"),
        ({"max_tokens": 1, "scope": "tenant"}, "scope must be one of"),
        ({"max_cost": {"by": "tier", "limits": {"pro": 5}}}, "maxCost.default is required"),
        ({"max_cost": {"by": "tier", "limits": {"pro": 0}, "default": 1}}, "maxCost.limits.pro must be greater"),
        ({"max_tokens": {"on": "tier", "default": 1}}, "unknown key(s) on"),
        ({"max_tokens": 1, "warn_at_percent": 100}, "warnAtPercent"),
        ({"max_tokens": 1, "message": ""}, "message"),
        ({"max_tokens": 1, "window_kind": "sliding"}, "windowKind"),
        ({"max_tokens": 1, "strategy": "retry"}, "strategy"),
        ({"max_tokens": 1, "window": "soon"}, "window"),
        ({"max_tokens": 1, "scope": "resource"}, "needs a server cache"),
        ({"max_tokens": 1, "prices": {"echo": {"input": 1}}}, "provider/model"),
        ({"max_tokens": 1, "prices": {"local/echo": {"in": 1}}}, "unknown key(s) in"),
        ({"max_tokens": 1, "prices": {"local/echo": {"input": "x"}}}, "must be a number"),
    ],
)
def test_invalid_settings_are_rejected(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TokenCostControl(**kwargs)


async def test_factory_binds_caches_and_prices() -> None:
    memory, redis_like = InMemoryServerCache(), InMemoryServerCache()
    factory = token_cost_control_factory({"memory": memory, "redis": redis_like}, {"local/echo": {"input": 1.0}})

    built = factory({"backend": "redis", "maxTokens": 2000, "maxCost": 5, "scope": "resource", "window": "30d"})
    assert built.cache is redis_like and built.window_seconds == 30 * DAY
    assert built.max_tokens is not None and built.max_tokens.fixed == 2000
    assert built.prices == {"local/echo": Price(input=parse_prices({"a/b": {"input": 1.0}})["a/b"].input)}
    assert factory({"maxTokens": 1, "windowKind": "rolling", "strategy": "warn"}).cache is memory

    with pytest.raises(ValueError, match="unknown option 'ttl'"):
        factory({"maxTokens": 1, "ttl": 5})
    with pytest.raises(ValueError, match="not configured"):
        token_cost_control_factory({"memory": memory})({"backend": "redis", "maxTokens": 1})
    with pytest.raises(ValueError, match="unknown backend"):
        factory({"backend": "disk", "maxTokens": 1})
    with pytest.raises(ValueError, match="set maxCost"):
        factory({"scope": "resource"})
    assert "token-cost-control" not in BUILTIN_FACTORIES  # registered by the host, bound to its caches


# ---------------------------------------------------------------- ToolSearchProcessor


class ToolRequests:
    """The tool names the local model was sent, one list per model call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[list[str]] = []
        original = LocalModel.stream

        def spy(model: LocalModel, request: Any) -> Any:
            self.calls.append([t.name for t in request.tools])
            return original(model, request)

        monkeypatch.setattr(LocalModel, "stream", spy)


@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> ToolRequests:
    return ToolRequests(monkeypatch)


def library(calls: list[Any] | None = None) -> list[Tool]:
    def get_weather(args: Any) -> dict[str, Any]:
        if calls is not None:
            calls.append(args)
        return {"city": args.get("city"), "forecast": "sunny", "celsius": 21}

    return [
        Tool("send_email", "Send an email message to a recipient", lambda a: "sent"),
        Tool("get_weather", "Get the current weather forecast for a city", get_weather),
        Tool("convert_currency", "Convert an amount between currencies", lambda a: 1.0),
        Tool("weather_alerts_admin", "Manage alert subscriptions", lambda a: []),
        Tool("plan_trip", "Plan a trip; checks the weather on the way", lambda a: "planned"),
    ]


def search_agent(processor: ToolSearchProcessor, tools: list[Tool]) -> Agent:
    return Agent(
        id="searcher",
        model="local/scripted",
        tools=tools,
        input_processors=[processor],
        error_processor_defaults=False,
    )


async def test_tool_search_finds_loads_and_calls_a_tool(requests: ToolRequests) -> None:
    weather_calls: list[Any] = []
    agent = search_agent(ToolSearchProcessor(), library(weather_calls))
    script = (
        call(SEARCH_TOOLS, {"query": "weather"}, "s1"),
        call(LOAD_TOOL, {"name": "get_weather"}, "l1"),
        call("get_weather", {"city": "Paris"}, "w1"),
        answer("It is sunny in Paris."),
    )

    result = await run(agent, options(*script))

    assert result.tripwire is None and result.text == "It is sunny in Paris."
    found, loaded, weather = result.tool_results
    assert not found.is_error
    names = [r["name"] for r in found.result["results"]]
    assert names[:2] == ["get_weather", "weather_alerts_admin"]
    assert found.result["results"][0] == {
        "name": "get_weather",
        "description": "Get the current weather forecast for a city",
        "score": 3.0,
    }
    assert "send_email" not in names
    assert not loaded.is_error and loaded.result["success"] and loaded.result["loaded"] == ["get_weather"]
    assert not weather.is_error and weather.result["forecast"] == "sunny"
    assert weather_calls == [{"city": "Paris"}]

    assert requests.calls[0] == [SEARCH_TOOLS, LOAD_TOOL]
    assert requests.calls[1] == [SEARCH_TOOLS, LOAD_TOOL]
    assert requests.calls[2] == [SEARCH_TOOLS, LOAD_TOOL, "get_weather"]
    assert requests.calls[3] == [SEARCH_TOOLS, LOAD_TOOL, "get_weather"]  # stays loaded


async def test_loaded_tools_do_not_carry_over_to_the_next_run(requests: ToolRequests) -> None:
    agent = search_agent(ToolSearchProcessor(), library())
    await run(agent, options(call(LOAD_TOOL, {"name": "send_email"}), answer()))
    assert requests.calls[1] == [SEARCH_TOOLS, LOAD_TOOL, "send_email"]
    await run(agent, options(answer()))
    assert requests.calls[2] == [SEARCH_TOOLS, LOAD_TOOL]


async def test_an_unloaded_tool_cannot_be_called() -> None:
    agent = search_agent(ToolSearchProcessor(), library())
    result = await run(agent, options(call("send_email", {"to": "x"}), answer()))
    assert result.tool_results[0].is_error and "unknown tool" in result.tool_results[0].result


async def test_load_tool_with_an_unknown_name_lists_near_matches(requests: ToolRequests) -> None:
    agent = search_agent(ToolSearchProcessor(), library())
    result = await run(agent, options(call(LOAD_TOOL, {"name": "get_wether"}), answer()))
    error = result.tool_results[0].result
    assert error["success"] is False and error["toolName"] == "get_wether"
    assert error["message"].startswith("Unknown tool 'get_wether'. Did you mean: get_weather")
    assert requests.calls[1] == [SEARCH_TOOLS, LOAD_TOOL]  # nothing was loaded

    nothing = await run(agent, options(call(LOAD_TOOL, {"toolName": "zzzz"}), answer()))
    assert nothing.tool_results[0].result["message"] == "Unknown tool 'zzzz'. Use search_tools to find tools."


async def test_an_explicit_library_keeps_the_agents_own_tools(requests: ToolRequests) -> None:
    own = Tool("lookup_order", "Find an order", lambda a: {"order": 1})
    tools = library()
    processor = ToolSearchProcessor([tools[0], tools[1]], max_results=1)
    agent = search_agent(processor, [own])

    result = await run(
        agent,
        options(
            call(SEARCH_TOOLS, {"query": "email"}, "s"),
            call(LOAD_TOOL, {"name": "send_email"}, "l"),
            call("send_email", {}, "e"),
            answer(),
        ),
    )

    assert [r["name"] for r in result.tool_results[0].result["results"]] == ["send_email"]
    assert result.tool_results[2].result == "sent"
    assert requests.calls[0] == [SEARCH_TOOLS, LOAD_TOOL, "lookup_order"]
    assert requests.calls[2] == [SEARCH_TOOLS, LOAD_TOOL, "lookup_order", "send_email"]


async def test_library_names_pick_agent_tools_and_active_tools_are_extended(requests: ToolRequests) -> None:
    tools = library()
    agent = search_agent(ToolSearchProcessor(["get_weather", "plan_trip"]), tools)
    opts = options(call(LOAD_TOOL, {"name": "plan_trip"}), answer())
    opts = ExecutionOptions(provider_options=opts.provider_options, active_tools=("send_email",))

    await run(agent, opts)

    assert requests.calls[0] == [SEARCH_TOOLS, LOAD_TOOL, "send_email"]
    assert requests.calls[1] == [SEARCH_TOOLS, LOAD_TOOL, "send_email", "plan_trip"]


def test_ranking_weighs_name_matches_over_description_matches() -> None:
    tools = library()
    ranked = [t.name for t in rank_tools("weather", tools, 5)]
    # get_weather and weather_alerts_admin match by name (tie broken by name), plan_trip by description.
    assert ranked == ["get_weather", "weather_alerts_admin", "plan_trip"]
    assert rank_tools("weather forecast", tools, 5)[0].name == "get_weather"
    assert [t.name for t in rank_tools("currencies", tools, 5)] == ["convert_currency"]  # plural, partial
    assert [t.name for t in rank_tools("sendEmail", tools, 5)] == ["send_email"]
    assert rank_tools("weather", tools, 1)[0].name == "get_weather"
    assert rank_tools("nothing relevant", tools, 5) == []
    assert score_tool("get_weather", tools[1]) > score_tool("weather", tools[1])


def test_tool_search_is_a_builtin_with_camel_case_options() -> None:
    built = default_registry().build(ProcessorSpec("tool-search", None, {"maxResults": 3, "library": ["a"]}))
    assert isinstance(built, ToolSearchProcessor)
    assert (built.max_results, built.library) == (3, ["a"])
    with pytest.raises(ValueError, match="maxResults"):
        ToolSearchProcessor(max_results=0)
    with pytest.raises(ValueError, match="library"):
        ToolSearchProcessor("get_weather")
