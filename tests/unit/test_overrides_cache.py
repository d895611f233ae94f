"""Each replica's cache of editor overrides: an invalidation that overtakes a
read in flight keeps that read out of the cache, and entries expire."""

from __future__ import annotations

import asyncio

from agentd.runtime import Agent
from agentd.runtime.overrides import InMemoryOverrideStore, Overrides, OverrideValues, OverrideVersion
from agentd.runtime.overrides.store import Step


class HeldStore(InMemoryOverrideStore):
    """Reads wait for `release` while `hold` is set; `reads` counts them."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = False
        self.release = asyncio.Event()
        self.reading = asyncio.Event()
        self.reads = 0
        self._writing = False

    async def append(self, key: str, step: Step, updated_by: str) -> OverrideVersion:
        self._writing = True
        try:
            return await super().append(key, step, updated_by)
        finally:
            self._writing = False

    async def head(self, key: str) -> OverrideVersion | None:
        found = await super().head(key)
        if self._writing:
            return found  # append's own read of the head
        self.reads += 1
        if self.hold and not self.reading.is_set():  # the first read is held
            self.reading.set()
            await self.release.wait()
        return found


async def test_an_invalidation_during_a_read_keeps_the_read_out_of_the_cache() -> None:
    store = HeldStore()
    overrides = Overrides(store, dict)
    agent = Agent(id="a", instructions="Code.")
    await store.append("a", lambda current: OverrideValues(instructions="old"), "x")
    store.hold = True
    reading = asyncio.create_task(overrides.current(agent, "default"))
    await store.reading.wait()
    # Another replica writes "new" and its invalidation arrives while "old" is being read.
    await store.append("a", lambda current: OverrideValues(instructions="new"), "y")
    overrides.invalidate("a")
    store.release.set()
    assert (await reading).values.instructions == "old"  # type: ignore[union-attr]
    store.hold = False
    assert (await overrides.current(agent, "default")).values.instructions == "new"  # type: ignore[union-attr]
    assert store.reads == 2


async def test_entries_expire_after_the_ttl() -> None:
    now = [0.0]
    store = HeldStore()
    overrides = Overrides(store, dict, cache_ttl=30, clock=lambda: now[0])
    agent = Agent(id="a")
    for _ in range(3):
        await overrides.current(agent, "default")
    assert store.reads == 1
    now[0] = 31.0
    await overrides.current(agent, "default")
    assert store.reads == 2
