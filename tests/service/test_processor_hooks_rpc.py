"""Hooks' reach over gRPC: `send_signal` in process_output_result, the one
warning an agent gets when the implicit error-lane retry cap applies to it,
and a process_llm_request that `wants_llm_request` says has no work, never called."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.messages import Message
from agentd.runtime.processors.base import (
    APIErrorResult,
    LLMRequestResult,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    ProcessLLMRequestArgs,
    Processor,
    ProcessOutputResultArgs,
)
from agentd.runtime.storage import InMemoryStorage, MessageQuery
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from support.server import Running, serving


class Summary(Processor):
    """Leaves a reminder for the thread's next turn once the answer is final."""

    id = "summary-note"

    async def process_output_result(self, args: ProcessOutputResultArgs) -> None:
        assert args.send_signal is not None
        await args.send_signal(type="reactive", contents=f"last answer had {len(args.result.text)} characters")


class NeverRetries(Processor):
    id = "never-retries"

    def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
        return None


class Shouts(Processor):
    """Upper-cases the prompt's user text, for a run whose input asked for it
    (its state says so): its hook has work only then."""

    id = "shouts"

    def __init__(self) -> None:
        self.called: list[str] = []  # the model strings its process_llm_request was called for

    def process_input(self, args: ProcessInputArgs) -> None:
        args.state["shout"] = any("shout" in m.text for m in args.messages)

    def wants_llm_request(self, state: Mapping[str, Any], model: str) -> bool:
        return bool(state.get("shout"))

    def process_llm_request(self, args: ProcessLLMRequestArgs) -> LLMRequestResult:
        self.called.append(args.model)
        return LLMRequestResult(prompt=[Message.user(m.text.upper()) if m.role == "user" else m for m in args.prompt])


@pytest.fixture
def shouts() -> Shouts:
    return Shouts()


@pytest.fixture
async def running(storage: InMemoryStorage, shouts: Shouts) -> AsyncIterator[Running]:
    agents = [
        Agent(id="noted", memory=Memory(storage), output_processors=[Summary()]),
        Agent(id="own-errors", error_processors=[NeverRetries()]),
        Agent(id="own-errors-capped", error_processors=[NeverRetries()], max_processor_retries=1),
        Agent(id="defaults-only"),
        Agent(id="shouting", input_processors=[shouts]),
    ]
    async with serving(agents, storage=storage) as running:
        yield running


def on_thread() -> opb.ExecutionOptions:
    return opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t1"))


async def test_send_signal_in_process_output_result(running: Running, storage: InMemoryStorage) -> None:
    call = running.agents.Stream(apb.StreamRequest(agent_id="noted", text="hello there", options=on_thread()))
    chunks = [chunk async for message in call for chunk in message.chunks]
    [echo] = [c.signal.signal for c in chunks if c.WhichOneof("payload") == "signal"]
    assert (echo.type, echo.text) == ("reactive", "last answer had 11 characters")
    assert chunks[-1].WhichOneof("payload") == "finish"
    stored = (await storage.list_messages(MessageQuery("t1", include_system_reminders=True))).messages
    assert [m.role for m in stored] == ["user", "assistant", "signal"]  # kept for the next turn


def cap_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "max_processor_retries" in r.getMessage()]


async def test_the_implicit_retry_cap_is_logged_once_per_agent(
    running: Running, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="agentd.processors")
    for _ in range(3):
        await running.agents.Generate(apb.GenerateRequest(agent_id="own-errors", text="hi"))
    [warning] = cap_warnings(caplog)
    assert "'own-errors'" in warning and "3" in warning
    for agent_id in ("own-errors-capped", "defaults-only"):  # a cap of its own, or no processors of its own
        await running.agents.Generate(apb.GenerateRequest(agent_id=agent_id, text="hi"))
    assert len(cap_warnings(caplog)) == 1


async def test_a_process_llm_request_with_no_work_for_the_call_is_not_called(running: Running, shouts: Shouts) -> None:
    quiet = await running.agents.Generate(apb.GenerateRequest(agent_id="shouting", text="hello there"))
    assert (quiet.text, shouts.called) == ("hello there", [])  # wants_llm_request said no: no call
    loud = await running.agents.Generate(apb.GenerateRequest(agent_id="shouting", text="shout this"))
    assert (loud.text, shouts.called) == ("SHOUT THIS", ["local/echo"])
