"""Memory in the agent loop (runtime API, in-memory storage)."""

from __future__ import annotations

from typing import Any

import pytest

from agentd.runtime import Agent, ExecutionOptions, InvalidArgument
from agentd.runtime.memory import Memory
from agentd.runtime.models.local import LocalModel
from agentd.runtime.options import MemoryOptions, ThreadRef
from agentd.runtime.processors.base import (
    ProcessInputStepArgs,
    Processor,
    ProcessOutputResultArgs,
)
from agentd.runtime.signals import create_signal, to_db_message
from agentd.runtime.storage import InMemoryStorage, MessageQuery


@pytest.fixture
def prompts(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    seen: list[list[str]] = []
    original = LocalModel.stream

    def spy(model: LocalModel, request: Any) -> Any:
        seen.append([f"{m.role}:{m.text}" for m in request.prompt])
        return original(model, request)

    monkeypatch.setattr(LocalModel, "stream", spy)
    return seen


def bound(thread: str = "t1", resource: str = "u1", **thread_fields: Any) -> ExecutionOptions:
    return ExecutionOptions(memory=MemoryOptions(resource, ThreadRef(thread, **thread_fields)))


async def test_history_is_carried_into_the_next_call(prompts: list[list[str]]) -> None:
    storage = InMemoryStorage()
    agent = Agent(id="a", instructions="be brief", memory=Memory(storage, last_messages=10))
    await agent.generate("first question", bound())
    result = await agent.generate("second question", bound())
    assert prompts[1] == ["system:be brief", "user:first question", "assistant:first question", "user:second question"]
    assert result.thread_id == "t1"
    page = await storage.list_messages(MessageQuery("t1"))
    assert [(m.role, m.text) for m in page.messages] == [
        ("user", "first question"),
        ("assistant", "first question"),
        ("user", "second question"),
        ("assistant", "second question"),
    ]
    assert {m.resource_id for m in page.messages} == {"u1"}


async def test_last_messages_bounds_the_recall(prompts: list[list[str]]) -> None:
    agent = Agent(id="a", memory=Memory(InMemoryStorage(), last_messages=2))
    for text in ("one", "two", "three"):
        await agent.generate(text, bound())
    assert prompts[2] == ["user:two", "assistant:two", "user:three"]


async def test_thread_object_creates_and_updates_metadata_but_not_the_title() -> None:
    storage = InMemoryStorage()
    agent = Agent(id="a", memory=Memory(storage))
    await agent.generate("x", bound(title="Billing support", metadata={"category": "billing"}))
    thread = await storage.get_thread("t1")
    assert thread is not None and (thread.title, thread.metadata) == ("Billing support", {"category": "billing"})
    await agent.generate("y", bound(title="Renamed", metadata={"category": "refunds"}))
    thread = await storage.get_thread("t1")
    assert thread is not None and (thread.title, thread.metadata) == ("Billing support", {"category": "refunds"})
    updated_at = thread.updated_at
    await agent.generate("z", bound())  # a plain id leaves the metadata alone
    thread = await storage.get_thread("t1")
    assert thread is not None and thread.metadata == {"category": "refunds"} and thread.updated_at >= updated_at


async def test_without_a_thread_a_memory_agent_runs_without_memory() -> None:
    storage = InMemoryStorage()
    agent = Agent(id="a", memory=Memory(storage))
    for options in (ExecutionOptions(), ExecutionOptions(memory=MemoryOptions("u1"))):
        result = await agent.generate("x", options)
        assert result.error is None and result.thread_id is None
    assert await storage.get_thread("t1") is None


async def test_a_thread_needs_its_resource() -> None:
    agent = Agent(id="a", memory=Memory(InMemoryStorage()))
    with pytest.raises(InvalidArgument) as info:
        await agent.generate("x", ExecutionOptions(memory=MemoryOptions(None, ThreadRef("t1"))))
    assert info.value.reason == "MEMORY_IDS_REQUIRED"


async def test_a_thread_of_another_resource_is_refused() -> None:
    agent = Agent(id="a", memory=Memory(InMemoryStorage()))
    await agent.generate("x", bound(resource="u1"))
    with pytest.raises(InvalidArgument) as info:
        await agent.generate("x", bound(resource="u2"))
    assert info.value.reason == "THREAD_RESOURCE_MISMATCH"


async def test_an_output_abort_saves_nothing() -> None:
    class Guard(Processor):
        id = "guard"

        def process_output_result(self, args: ProcessOutputResultArgs) -> None:
            if "forbidden" in args.result.text:
                args.abort("no")

    storage = InMemoryStorage()
    agent = Agent(id="a", memory=Memory(storage), output_processors=[Guard()])
    await agent.generate("fine", bound())
    result = await agent.generate("forbidden words", bound())
    assert result.tripwire is not None
    assert [m.text for m in (await storage.list_messages(MessageQuery("t1"))).messages] == ["fine", "fine"]


async def test_reminders_are_stored_re_rendered_and_hidden_from_listings(prompts: list[list[str]]) -> None:
    class Remind(Processor):
        id = "remind"

        async def process_input_step(self, args: ProcessInputStepArgs) -> None:
            if args.request_context.get("remind") and args.send_signal:
                await args.send_signal(type="reactive", contents="keep it short")
                await args.send_signal(type="reactive", contents="transient note", transient=True)

    storage = InMemoryStorage()
    agent = Agent(id="a", memory=Memory(storage), input_processors=[Remind()])
    await agent.generate(
        "one", ExecutionOptions(memory=MemoryOptions("u1", ThreadRef("t1")), request_context={"remind": True})
    )
    await agent.generate("two", bound())
    assert "user:<system-reminder>keep it short</system-reminder>" in prompts[1]  # re-rendered next turn
    assert not any("transient note" in p for p in prompts[1])  # transient: never stored
    default = await storage.list_messages(MessageQuery("t1"))
    assert not any(m.role == "signal" for m in default.messages)
    everything = await storage.list_messages(MessageQuery("t1", include_system_reminders=True))
    assert [m.role for m in everything.messages].count("signal") == 1


async def test_user_signal_rows_are_listed_and_recalled(prompts: list[list[str]]) -> None:
    storage = InMemoryStorage()
    agent = Agent(id="a", memory=Memory(storage))
    await agent.generate("hello", bound())
    signal = create_signal("user", "from slack", attributes={"name": "Devin"})
    await storage.save_messages([to_db_message(signal, "t1", "u1")])
    await agent.generate("next", bound())
    assert 'user:<user name="Devin">from slack</user>' in prompts[1]
    listed = await storage.list_messages(MessageQuery("t1"))
    assert any(m.role == "signal" for m in listed.messages)


async def test_context_overflow_trims_recalled_history_and_retries(prompts: list[list[str]]) -> None:
    storage = InMemoryStorage()
    agent = Agent(id="a", model="local/scripted", memory=Memory(storage, last_messages=10))
    for text in ("a", "b"):
        await agent.generate(
            text,
            ExecutionOptions(
                memory=MemoryOptions("u1", ThreadRef("t1")), provider_options={"local": {"script": [{"text": text}]}}
            ),
        )
    overflow = {"local": {"script": [{"error": {"message": "context length exceeded", "status": 400}}, {"text": "ok"}]}}
    result = await agent.generate(
        "c",
        ExecutionOptions(
            memory=MemoryOptions("u1", ThreadRef("t1")), provider_options=overflow, error_processor_defaults=False
        ),
    )
    assert result.text == "ok"
    assert len(prompts[-1]) < len(prompts[-2])  # the retry recalled less
    assert prompts[-1][-1] == "user:c"


async def test_no_memory_stores_nothing_and_keeps_the_resource_id() -> None:
    result = await Agent(id="a").generate("x", ExecutionOptions(memory=MemoryOptions("u1")))
    assert result.resource_id == "u1" and result.thread_id is None


def test_memory_rejects_negative_last_messages() -> None:
    with pytest.raises(ValueError):
        Memory(InMemoryStorage(), last_messages=-1)
