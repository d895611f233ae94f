"""Hooks' reach over gRPC: `send_signal` in process_output_result, and the one
warning an agent gets when the implicit error-lane retry cap applies to it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.processors.base import APIErrorResult, ProcessAPIErrorArgs, Processor, ProcessOutputResultArgs
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


@pytest.fixture
async def running(storage: InMemoryStorage) -> AsyncIterator[Running]:
    agents = [
        Agent(id="noted", memory=Memory(storage), output_processors=[Summary()]),
        Agent(id="own-errors", error_processors=[NeverRetries()]),
        Agent(id="own-errors-capped", error_processors=[NeverRetries()], max_processor_retries=1),
        Agent(id="defaults-only"),
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
