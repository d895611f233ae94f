"""An agent's lanes are resolved once and reused run after run, over gRPC:
a change to the agent's processor lists (even in place) reaches the next run,
a lane that is a function of the request context is resolved per run, an
editor override's copy of the agent runs the code's processors with the
edited instructions, and the default error processors, shared by the runs,
keep each run's retries apart.

The agents run the `prompt/...` test model (its reply is its system prompt)
or the scripted local model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from google.protobuf import field_mask_pb2

from agentd.runtime import Agent, register_provider
from agentd.runtime.processors.base import Processor
from agentd_proto.v1 import agent_overrides_pb2 as ovpb
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from support.processors import Shout
from support.server import Running, serving
from support_models import PROMPT, prompt_model

register_provider(PROMPT, prompt_model)


def shout_when_asked(context: dict[str, Any]) -> list[Processor]:
    return [Shout()] if context.get("shout") else []


@pytest.fixture
def agents() -> dict[str, Agent]:
    return {
        "static": Agent(id="static", model="prompt/x", instructions="Code instructions.", output_processors=[]),
        "dynamic": Agent(
            id="dynamic", model="prompt/x", instructions="Code instructions.", output_processors=shout_when_asked
        ),
        "flaky": Agent(id="flaky", model="local/scripted"),
    }


@pytest.fixture
async def running(agents: dict[str, Agent]) -> AsyncIterator[Running]:
    async with serving(list(agents.values())) as running:
        yield running


async def reply(running: Running, agent_id: str, options: opb.ExecutionOptions | None = None) -> str:
    request = apb.GenerateRequest(agent_id=agent_id, text="hi", options=options)
    return (await running.agents.Generate(request)).text


async def test_a_change_to_the_agents_lists_reaches_the_next_run(running: Running, agents: dict[str, Agent]) -> None:
    agent = agents["static"]
    assert await reply(running, "static") == "system=[Code instructions.] tools=[]"

    agent.output_processors.append(Shout())  # type: ignore[union-attr]  # in place: the same list
    assert await reply(running, "static") == "SYSTEM=[CODE INSTRUCTIONS.] TOOLS=[]"

    agent.output_processors = []  # a new list
    assert await reply(running, "static") == "system=[Code instructions.] tools=[]"


async def test_a_lane_of_the_request_context_is_resolved_for_each_run(running: Running) -> None:
    shout = opb.ExecutionOptions()
    shout.request_context.update({"shout": True})

    assert await reply(running, "dynamic", shout) == "SYSTEM=[CODE INSTRUCTIONS.] TOOLS=[]"
    assert await reply(running, "dynamic") == "system=[Code instructions.] tools=[]"
    assert await reply(running, "dynamic", shout) == "SYSTEM=[CODE INSTRUCTIONS.] TOOLS=[]"


async def test_an_override_runs_the_agents_processors_with_its_instructions(
    running: Running, agents: dict[str, Agent]
) -> None:
    agents["static"].output_processors = [Shout()]
    assert await reply(running, "static") == "SYSTEM=[CODE INSTRUCTIONS.] TOOLS=[]"

    overrides = ovpb.AgentOverrides(agent_id="static", instructions="Edited.")
    mask = field_mask_pb2.FieldMask(paths=["instructions"])
    await running.agents.UpdateAgentOverrides(ovpb.UpdateAgentOverridesRequest(overrides=overrides, update_mask=mask))
    assert await reply(running, "static") == "SYSTEM=[EDITED.] TOOLS=[]"

    agents["static"].output_processors = []  # the code's lists still decide, under the override
    assert await reply(running, "static") == "system=[Edited.] tools=[]"


async def test_runs_sharing_the_default_error_lane_each_get_their_own_retry(running: Running) -> None:
    options = opb.ExecutionOptions()
    script = [{"error": {"message": "upstream 500", "status": 500, "retryable": True}}, {"text": "recovered"}]
    options.provider_options.update({"local": {"script": script}})

    # stream-error-retry-processor retries once a run (max_retries 1): a count
    # kept across runs would leave the second run its error.
    for _ in range(3):
        assert await reply(running, "flaky", options) == "recovered"
