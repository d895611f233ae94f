"""tool-search over gRPC: what search_tools answers (scores, minScore, short
descriptions, what was found or that nothing was), loading several tools at
once, autoLoad, the system message, storage "context" across a thread's runs,
and a request-aware filter registered by an --app module."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from agentd.runtime import Agent, Tool, snake
from agentd.runtime.memory import Memory
from agentd.runtime.processors.builtins.tool_search import ToolSearchFilterArgs, ToolSearchProcessor
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from support.errors import rich_error
from support.runs import LocalModelSpy
from support.server import Running, serving
from support.wire import lane, scripted

LONG = "Send an email message to a recipient, " + "with attachments, " * 12 + "and a read receipt"


def library() -> list[Tool]:
    return [
        Tool("send_email", LONG, lambda a: "sent"),
        Tool("get_weather", "Get the current weather forecast for a city", lambda a: {"forecast": "sunny"}),
        Tool("weather_alerts", "Manage weather alert subscriptions", lambda a: []),
        Tool("plan_trip", "Plan a trip; checks the weather on the way", lambda a: "planned"),
        Tool("convert_currency", "Convert an amount between currencies", lambda a: 1.0),
    ]


def only_pro_may_email(args: ToolSearchFilterArgs) -> bool:
    return args.tool_name != "send_email" or args.request_context.get("tier") == "pro"


async def allow_async(args: ToolSearchFilterArgs) -> bool:
    return only_pro_may_email(args)


def tenant_search(options: dict[str, Any]) -> ToolSearchProcessor:
    """What an --app module registers: a tool-search whose filter reads the request context."""
    return ToolSearchProcessor(filter=allow_async, **{snake(k): v for k, v in options.items()})


@pytest.fixture
def storage() -> InMemoryStorage:
    return InMemoryStorage()


@pytest.fixture
async def server(storage: InMemoryStorage) -> AsyncIterator[Running]:
    agents = [
        Agent(id="tools", model="local/scripted", tools=library(), error_processor_defaults=False),
        Agent(
            id="remembers",
            model="local/scripted",
            tools=library(),
            memory=Memory(storage),
            error_processor_defaults=False,
        ),
    ]
    async with serving(agents, storage=storage, processors={"tenant-tool-search": tenant_search}) as running:
        yield running


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"toolCalls": [{"id": call_id, "name": name, "args": args}]}


def options(
    *steps: dict[str, Any],
    processor: str = "tool-search",
    context: dict[str, Any] | None = None,
    memory: dict[str, str] | None = None,
    **processor_options: Any,
) -> opb.ExecutionOptions:
    result = scripted(*steps, input_processors=lane((processor, processor_options)))
    if context is not None:
        request_context = struct_pb2.Struct()
        request_context.update(context)
        result.request_context.CopyFrom(request_context)
    if memory is not None:
        result.memory.resource = memory["resource"]
        result.memory.thread_id = memory["thread"]
    return result


async def generate(running: Running, opts: opb.ExecutionOptions, agent: str = "tools") -> apb.GenerateResponse:
    reply: apb.GenerateResponse = await running.agents.Generate(
        apb.GenerateRequest(agent_id=agent, text="help", options=opts)
    )
    return reply


def results(reply: apb.GenerateResponse) -> list[Any]:
    return [json_format.MessageToDict(r.result) for r in reply.tool_results]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> LocalModelSpy:
    return LocalModelSpy(monkeypatch)


def tools_sent(spy: LocalModelSpy) -> list[list[str]]:
    return [[t.name for t in request.tools] for request in spy.requests]


async def test_search_answers_say_what_was_found_with_scores(server: Running) -> None:
    reply = await generate(
        server,
        options(
            call("search_tools", {"query": "weather forecast"}, "s1"),
            call("search_tools", {"query": "spreadsheet"}, "s2"),
            {"text": "done"},
        ),
    )
    found, nothing = results(reply)
    names = [r["name"] for r in found["results"]]
    assert names[0] == "get_weather" and "send_email" not in names
    assert found["results"][0] == {
        "name": "get_weather",
        "description": "Get the current weather forecast for a city",
        "score": 4.0,
    }
    scores = [r["score"] for r in found["results"]]
    assert scores == sorted(scores, reverse=True)
    assert found["message"].startswith(f"Found {len(names)} tool(s).")
    assert nothing == {"results": [], "message": 'No tools found matching "spreadsheet". Try different keywords.'}


async def test_min_score_drops_weak_matches(server: Running) -> None:
    steps = (call("search_tools", {"query": "weather"}, "s1"), {"text": "done"})
    everything = results(await generate(server, options(*steps)))[0]["results"]
    assert [r["name"] for r in everything] == ["get_weather", "weather_alerts", "plan_trip"]
    assert [r["score"] for r in everything] == [3.0, 3.0, 1.0]
    strong = results(await generate(server, options(*steps, minScore=1)))[0]["results"]
    assert [r["name"] for r in strong] == ["get_weather", "weather_alerts"]  # a score must be above minScore


async def test_search_results_cut_descriptions_to_150_characters(server: Running) -> None:
    reply = await generate(server, options(call("search_tools", {"query": "email"}, "s1"), {"text": "done"}))
    (email,) = results(reply)[0]["results"]
    assert len(LONG) > 150
    assert email["description"] == LONG[:147] + "..."


async def test_load_tool_loads_several_tools_at_once(server: Running, spy: LocalModelSpy) -> None:
    reply = await generate(
        server,
        options(
            call("load_tool", {"toolNames": ["get_weather", "plan_trip", "nope"]}, "l1"),
            call("load_tool", {"toolNames": ["plan_trip"]}, "l2"),
            {"text": "done"},
        ),
    )
    several, again = results(reply)
    assert several["loaded"] == ["get_weather", "plan_trip"] and several["notFound"] == ["nope"]
    assert several["success"] is False and several["loadedCount"] == 2
    assert again["alreadyLoaded"] == ["plan_trip"] and again["success"] is True
    assert tools_sent(spy)[1] == ["search_tools", "load_tool", "get_weather", "plan_trip"]


async def test_a_system_message_explains_search_tools(server: Running, spy: LocalModelSpy) -> None:
    await generate(server, options({"text": "done"}))
    await generate(server, options({"text": "done"}, autoLoad=True))
    explained, auto = (" ".join(m.text for m in request.prompt if m.role == "system") for request in spy.requests)
    assert "search_tools" in explained and "load_tool" in explained and "toolNames" in explained
    assert "search_tools" in auto and "load_tool" not in auto


async def test_auto_load_loads_what_search_finds(server: Running, spy: LocalModelSpy) -> None:
    reply = await generate(
        server,
        options(call("search_tools", {"query": "currency"}, "s1"), {"text": "done"}, autoLoad=True),
    )
    (found,) = results(reply)
    assert found["activation"] == {"type": "tool-search-auto-load", "version": 1, "loaded": ["convert_currency"]}
    assert found["message"].startswith("Found and loaded 1 tool(s): convert_currency.")
    assert tools_sent(spy) == [["search_tools"], ["search_tools", "convert_currency"]]


async def test_context_storage_keeps_a_threads_loaded_tools_across_runs(server: Running, spy: LocalModelSpy) -> None:
    thread = {"resource": "u1", "thread": "t-context"}
    first = options(call("load_tool", {"toolName": "get_weather"}, "l1"), {"text": "ok"}, memory=thread)
    await generate(server, first, agent="remembers")
    again = options({"text": "ok"}, memory=thread, storage="context")
    await generate(server, again, agent="remembers")
    assert tools_sent(spy)[2] == ["search_tools", "load_tool", "get_weather"]

    # The default ("run") starts every run with nothing loaded.
    await generate(server, options({"text": "ok"}, memory=thread), agent="remembers")
    assert tools_sent(spy)[3] == ["search_tools", "load_tool"]


async def test_a_request_aware_filter_hides_tools_per_request(server: Running, spy: LocalModelSpy) -> None:
    steps = (
        call("search_tools", {"query": "email"}, "s1"),
        call("load_tool", {"toolName": "send_email"}, "l1"),
        {"text": "done"},
    )
    free = await generate(
        server, options(*steps, processor="tenant-tool-search", context={"tier": "free"}, maxResults=2)
    )
    searched, refused = results(free)
    assert searched["results"] == []
    assert refused["success"] is False and refused["message"].startswith("Unknown tool 'send_email'.")
    assert "send_email" not in tools_sent(spy)[2]

    pro = await generate(server, options(*steps, processor="tenant-tool-search", context={"tier": "pro"}))
    searched, loaded = results(pro)
    assert [r["name"] for r in searched["results"]] == ["send_email"]
    assert loaded["loaded"] == ["send_email"]
    assert tools_sent(spy)[-1] == ["search_tools", "load_tool", "send_email"]


@pytest.mark.parametrize(
    ("bad", "needle"),
    [
        ({"minScore": -1}, "minScore"),
        ({"storage": "disk"}, "storage must be one of"),
        ({"autoLoad": "yes"}, "autoLoad"),
    ],
)
async def test_bad_options_are_invalid_argument(server: Running, bad: dict[str, Any], needle: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await generate(server, options({"text": "done"}, **bad))
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.input_processors.processors[0].processor.options" in err.violations
    assert needle in info.value.details()
