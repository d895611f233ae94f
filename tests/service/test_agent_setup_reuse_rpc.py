"""What a run sets up from its agent alone (the editor overrides applied, the
lanes, the model string checked) is kept from run to run, over gRPC: a field
of the agent reassigned between runs, a list of it changed in place, an
override written, restored or deleted, and another agent's tools changing
each reach the next run; a field that is a function of the request context
is still resolved for each run.

The agents run the `prompt/...` test model (its reply is its system prompt
and its tools) or the local echo model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from google.protobuf import field_mask_pb2

from agentd.runtime import Agent, register_provider
from agentd.runtime.tools import Tool
from agentd_proto.v1 import agent_overrides_pb2 as ovpb
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from support.processors import Shout
from support.server import Running, serving
from support_models import PROMPT, prompt_model

register_provider(PROMPT, prompt_model)


def _tool(name: str, description: str) -> Tool:
    return Tool(name, description, lambda args: {"ok": True})


SEARCH, LOOKUP, WEATHER = _tool("search", "Search"), _tool("lookup", "Look up"), _tool("weather", "Sky")


def by_context(context: dict[str, Any]) -> str:
    return f"Asked by {context.get('who', 'nobody')}."


@pytest.fixture
def agents() -> dict[str, Agent]:
    return {
        "plain": Agent(id="plain", model="prompt/x", instructions="Code.", tools=[SEARCH]),
        "edited": Agent(id="edited", model="prompt/x", instructions="Code.", tools=[SEARCH, LOOKUP]),
        "other": Agent(id="other", model="prompt/x", tools=[WEATHER]),
        "dynamic": Agent(id="dynamic", model="prompt/x", instructions=by_context),
        "tuples": Agent(id="tuples", model="local/echo", input_processors=(), output_processors=()),
    }


@pytest.fixture
async def running(agents: dict[str, Agent]) -> AsyncIterator[Running]:
    async with serving(list(agents.values())) as running:
        yield running


async def reply(running: Running, agent_id: str, who: str | None = None) -> str:
    options = opb.ExecutionOptions()
    if who is not None:
        options.request_context.update({"who": who})
    return (await running.agents.Generate(apb.GenerateRequest(agent_id=agent_id, text="hi", options=options))).text


async def override(running: Running, agent_id: str, paths: list[str], **values: Any) -> None:
    overrides = ovpb.AgentOverrides(agent_id=agent_id, **values)
    mask = field_mask_pb2.FieldMask(paths=paths)
    await running.agents.UpdateAgentOverrides(ovpb.UpdateAgentOverridesRequest(overrides=overrides, update_mask=mask))


async def test_a_reassigned_field_reaches_the_next_run(running: Running, agents: dict[str, Agent]) -> None:
    agent = agents["plain"]
    assert await reply(running, "plain") == "system=[Code.] tools=[search: Search]"

    agent.instructions = "New code."
    assert await reply(running, "plain") == "system=[New code.] tools=[search: Search]"

    agent.tools = [LOOKUP]
    assert await reply(running, "plain") == "system=[New code.] tools=[lookup: Look up]"

    agent.tools.append(WEATHER)  # type: ignore[union-attr]  # in place: the same list
    assert await reply(running, "plain") == "system=[New code.] tools=[lookup: Look up, weather: Sky]"

    agent.model = "local/echo"
    assert await reply(running, "plain") == "hi"
    agent.model = "prompt/x"
    assert await reply(running, "plain") == "system=[New code.] tools=[lookup: Look up, weather: Sky]"


async def test_a_field_turned_into_a_function_is_resolved_for_each_run(
    running: Running, agents: dict[str, Agent]
) -> None:
    agent = agents["plain"]
    assert await reply(running, "plain", "ann") == "system=[Code.] tools=[search: Search]"

    agent.instructions = by_context
    assert await reply(running, "plain", "ann") == "system=[Asked by ann.] tools=[search: Search]"
    assert await reply(running, "plain", "bob") == "system=[Asked by bob.] tools=[search: Search]"

    agent.model = lambda context: "local/echo" if context.get("who") == "echo" else "prompt/x"
    assert await reply(running, "plain", "echo") == "hi"
    assert await reply(running, "plain", "bob") == "system=[Asked by bob.] tools=[search: Search]"

    agent.instructions = "Code again."
    assert await reply(running, "plain", "bob") == "system=[Code again.] tools=[search: Search]"


async def test_a_function_of_the_request_context_is_resolved_for_each_run(running: Running) -> None:
    assert await reply(running, "dynamic", "ann") == "system=[Asked by ann.] tools=[]"
    assert await reply(running, "dynamic", "bob") == "system=[Asked by bob.] tools=[]"
    assert await reply(running, "dynamic") == "system=[Asked by nobody.] tools=[]"


async def test_each_override_written_reaches_the_next_run(running: Running) -> None:
    assert await reply(running, "edited") == "system=[Code.] tools=[search: Search, lookup: Look up]"

    await override(running, "edited", ["instructions"], instructions="First edit.")
    assert await reply(running, "edited") == "system=[First edit.] tools=[search: Search, lookup: Look up]"
    assert await reply(running, "edited") == "system=[First edit.] tools=[search: Search, lookup: Look up]"

    await override(running, "edited", ["instructions"], instructions="Second edit.")
    assert await reply(running, "edited") == "system=[Second edit.] tools=[search: Search, lookup: Look up]"

    await override(running, "edited", ["tool_descriptions"], tool_descriptions={"lookup": "Find a word"})
    assert await reply(running, "edited") == "system=[Second edit.] tools=[search: Search, lookup: Find a word]"

    await running.agents.RestoreAgentOverrides(ovpb.RestoreAgentOverridesRequest(agent_id="edited", version=1))
    assert await reply(running, "edited") == "system=[First edit.] tools=[search: Search, lookup: Look up]"

    await running.agents.DeleteAgentOverrides(ovpb.DeleteAgentOverridesRequest(agent_id="edited"))
    assert await reply(running, "edited") == "system=[Code.] tools=[search: Search, lookup: Look up]"


async def test_the_codes_fields_reach_the_next_run_under_an_override(
    running: Running, agents: dict[str, Agent]
) -> None:
    agent = agents["edited"]
    paths = ["instructions", "tool_descriptions"]
    await override(running, "edited", paths, instructions="Edit.", tool_descriptions={"lookup": "Find a word"})
    assert await reply(running, "edited") == "system=[Edit.] tools=[search: Search, lookup: Find a word]"

    agent.tools = [LOOKUP]
    assert await reply(running, "edited") == "system=[Edit.] tools=[lookup: Find a word]"

    agent.tools.insert(0, WEATHER)  # type: ignore[union-attr]  # in place: the same list
    assert await reply(running, "edited") == "system=[Edit.] tools=[weather: Sky, lookup: Find a word]"

    agent.model = "local/echo"
    assert await reply(running, "edited") == "hi"


async def test_a_membership_override_follows_the_other_agents_tools(running: Running, agents: dict[str, Agent]) -> None:
    await override(running, "edited", ["tools"], tools=ovpb.ToolSelection(names=["weather"]))
    assert await reply(running, "edited") == "system=[Code.] tools=[weather: Sky]"

    agents["other"].tools = [_tool("weather", "Rain")]  # the tool the override names, from another agent
    assert await reply(running, "edited") == "system=[Code.] tools=[weather: Rain]"


async def test_a_reassigned_tuple_of_processors_reaches_the_next_run(
    running: Running, agents: dict[str, Agent]
) -> None:
    agent = agents["tuples"]
    assert await reply(running, "tuples") == "hi"

    agent.output_processors = (Shout(),)  # a tuple cannot change in place: only a write changes it
    assert await reply(running, "tuples") == "HI"

    agent.output_processors = ()
    assert await reply(running, "tuples") == "hi"

    agent.output_processors = lambda context: [Shout()] if context.get("who") == "loud" else []
    assert await reply(running, "tuples", "loud") == "HI"
    assert await reply(running, "tuples", "quiet") == "hi"
