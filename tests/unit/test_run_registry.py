"""The run registry keeps what it needs for the runs in flight only: a finished
run leaves nothing behind but its id among the recently finished (so a wait
that comes after the run still returns)."""

from __future__ import annotations

import asyncio
import gc

from agentd.runtime import Agent, RunRegistry


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
