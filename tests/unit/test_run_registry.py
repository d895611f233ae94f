"""The run registry keeps what it needs for the runs in flight only: a finished
run leaves nothing behind but its id among the recently finished (so a wait
that comes after the run still returns)."""

from __future__ import annotations

import asyncio
import gc
from dataclasses import replace

import pytest

from agentd.runtime import Agent, RunRegistry, Tool, Workflow
from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.processors.base import Processor, ProcessOutputStreamArgs
from support.polling import until
from support.processors import HeldAfterRun


async def run_many(registry: RunRegistry, agent: Agent, count: int) -> list[str]:
    ids = []
    for _ in range(count):
        handle = registry.start(agent, "hello")
        await handle.result()
        ids.append(handle.run_id)
    await asyncio.sleep(0)  # the done callbacks run
    return ids


async def test_finished_runs_leave_no_objects_behind() -> None:
    registry = RunRegistry()
    agent = Agent(id="echo", model="local/echo")
    await run_many(registry, agent, 20)  # warm: first-use caches
    gc.collect()
    before = len(gc.get_objects())
    await run_many(registry, agent, 300)
    gc.collect()
    # Unbounded would be an object or more per run (it was an asyncio.Event and its deque).
    assert len(gc.get_objects()) - before < 100


async def test_a_wait_for_a_run_returns_before_during_and_after_it() -> None:
    registry = RunRegistry()
    agent = Agent(id="echo", model="local/echo")
    early = asyncio.ensure_future(registry.wait_finished("run-fixed"))
    await asyncio.sleep(0)
    handle = registry.start(agent, "hello", run_id="run-fixed")
    during = asyncio.ensure_future(registry.wait_finished(handle.run_id))
    await asyncio.wait_for(asyncio.gather(early, during), 5)
    await asyncio.wait_for(registry.wait_finished(handle.run_id), 5)  # after: returns at once
    assert not registry.active()


class Shout(Processor):
    """Upper-cases the text as it streams: what it changes, the result says."""

    id = "shout"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        part = args.part
        if isinstance(part.payload, TextDelta):
            return replace(part, payload=replace(part.payload, text=part.payload.text.upper()))
        return part


async def test_a_run_its_caller_runs_to_the_end_keeps_no_chunks() -> None:
    """A Generate without a thread has no reader: its chunks would only be
    garbage. Its output processors still see every payload, and its result
    is theirs; a run in a task of its own keeps its chunks for its readers."""
    registry = RunRegistry()
    agent = Agent(id="loud", model="local/echo", output_processors=[Shout()])
    in_caller = registry.start(agent, "one two", in_caller=True)
    result = await in_caller.run_to_end()
    assert result.text == "ONE TWO"
    assert len(in_caller.buffer) == 0
    with pytest.raises(RuntimeError, match="keeps no chunks"):
        aiter(in_caller)

    own_task = registry.start(agent, "one two")
    assert (await own_task.result()).text == "ONE TWO"
    kept = [chunk async for chunk in own_task]
    assert "".join(c.payload.text for c in kept if isinstance(c.payload, TextDelta)) == "ONE TWO"
    assert [c.seq for c in kept] == list(range(1, len(kept) + 1))


async def test_the_sub_agents_and_workflows_of_a_run_that_keeps_no_chunks_keep_none_either() -> None:
    calls = [
        {"id": "c1", "name": "helper", "args": {"prompt": "hi there"}},
        {"id": "c2", "name": "flow", "args": {}},
    ]
    script = [{"toolCalls": calls}, {"text": "done"}]
    agent = Agent(
        id="lead",
        model="local/echo",
        agents={"helper": Agent(id="helper", model="local/echo")},
        workflows=[Workflow("flow", [Tool("step", "Says ok", lambda args: "ok")])],
    )
    options = ExecutionOptions(provider_options={"local": {"scripts": {"echo": script}}})
    registry = RunRegistry()
    handle = registry.start(agent, "go", options, in_caller=True)
    result = await handle.run_to_end()
    assert result.text == "done"
    assert result.steps[0].tool_results[0].result == "hi there"
    assert len(handle.buffer) == 0

    own_task = registry.start(agent, "go", options)
    await own_task.result()
    nested = [c async for c in own_task if c.parent_run_id == own_task.run_id]
    assert "".join(c.payload.text for c in nested if isinstance(c.payload, TextDelta)) == "hi there"
    assert any(c.source == "workflow" for c in nested)


def lead_with_helper(held: HeldAfterRun) -> tuple[Agent, ExecutionOptions]:
    """A lead agent that calls its sub-agent `helper` once (its work for after its run: `held`), then says "done"."""
    script = [{"toolCalls": [{"id": "c1", "name": "helper", "args": {"prompt": "hi"}}]}, {"text": "done"}]
    agent = Agent(
        id="lead",
        model="local/echo",
        agents={"helper": Agent(id="helper", model="local/echo", input_processors=[held])},
    )
    return agent, ExecutionOptions(provider_options={"local": {"scripts": {"echo": script}}})


async def test_an_aborted_run_stops_the_work_after_its_sub_agents_run_too() -> None:
    # The sub-agent's run has its result and its work for after it holds, so
    # the lead still waits on it; the lead's abort ends the sub-agent's run,
    # that work with it, and leaves no task behind.
    held = HeldAfterRun()
    agent, options = lead_with_helper(held)
    handle = RunRegistry().start(agent, "go", options)
    try:
        await held.began()
        assert handle.abort()
        result = await asyncio.wait_for(handle.result(), 10)
        assert result.aborted is not None and result.aborted.reason == "ABORTED"

        def runs() -> list[asyncio.Task[object]]:
            return [t for t in asyncio.all_tasks() if t.get_name().startswith("run ")]

        await until(runs, holds=lambda left: not left, what="the sub-agent's run to end")
        assert held.finished == []
    finally:
        held.release.set()


async def test_a_sub_agents_run_has_its_callers_limit_on_the_work_after_it() -> None:
    # The sub-agent's run is the lead's tool call: its work for after it, held
    # for ever, is cut short at the limit the lead's run has (not the default).
    held = HeldAfterRun()
    agent, options = lead_with_helper(held)
    registry = RunRegistry()
    registry.on_finish_timeout = 0.2
    handle = registry.start(agent, "go", options)
    result = await asyncio.wait_for(handle.result(), 10)
    assert result.text == "done" and result.error is None
    assert len(held.entered) == 1 and held.finished == []
