"""State signals through the runtime API (no gRPC): dedupe by lane, cache key and
mode, versions in the thread's metadata, and concurrent sends of one state
routed exactly once on every storage backend."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.runtime import (
    Agent,
    AgentRegistry,
    InvalidArgument,
    NotFound,
    RunRegistry,
    StateSignalRequest,
    send_state_signal,
)
from agentd.runtime.storage import MessageQuery, Storage, Thread
from agentd.runtime.threads import LocalOwnership, LocalThreadLog, ThreadRuntime, ThreadSettings
from support.storage import slow_reads


@pytest.fixture
async def threads(storage: Storage) -> AsyncIterator[ThreadRuntime]:
    runtime = ThreadRuntime(
        RunRegistry(),
        storage,
        AgentRegistry([Agent(id="chat", model="local/echo")]),
        log=LocalThreadLog(),
        ownership=LocalOwnership(),
        settings=ThreadSettings(),
    )
    await storage.create_thread(Thread("t1", "u1", metadata={"mine": True}))
    try:
        yield runtime
    finally:
        await runtime.shutdown()


def state(cache_key: str = "browser:a", **kwargs: Any) -> StateSignalRequest:
    fields: dict[str, Any] = {
        "agent_id": "chat",
        "resource_id": "u1",
        "thread_id": "t1",
        "lane": "browser",
        "cache_key": cache_key,
        "contents": "Browser open at example.com",
        "if_idle": "persist",  # no run: only the routing decision matters here
        **kwargs,
    }
    return StateSignalRequest(**fields)


async def send(threads: ThreadRuntime, request: StateSignalRequest) -> Any:
    return await send_state_signal(request, storage=threads.storage, threads=threads)


async def test_concurrent_sends_of_one_state_are_routed_exactly_once(threads: ThreadRuntime) -> None:
    slow_reads(threads.storage)
    results = await asyncio.gather(*(send(threads, state()) for _ in range(20)))
    assert Counter(r.routing.action for r in results) == {"persist": 1, "skipped_unchanged": 19}
    assert {r.version for r in results} == {1}
    rows = (await threads.storage.list_messages(MessageQuery("t1"))).messages
    assert len(rows) == 1
    stored = await threads.storage.get_thread("t1")
    assert stored is not None
    lane = stored.metadata["agentd"]["stateSignals"]["browser"]
    routed = next(r for r in results if r.routing.action == "persist")
    assert lane == {
        "currentCacheKey": "browser:a",
        "currentMode": "snapshot",
        "version": 1,
        "lastSignalId": routed.routing.signal.id,
    }
    assert stored.metadata["mine"] is True


async def test_versions_per_lane_key_and_mode(threads: ThreadRuntime) -> None:
    first = await send(threads, state(value={"url": "https://example.com"}, signal_id="s-1"))
    assert (first.routing.action, first.version) == ("persist", 1)
    signal = first.routing.signal
    assert signal.id == "s-1" and signal.type == "state" and signal.tag_name == "state"
    assert signal.metadata == {
        "state": {"id": "browser", "cacheKey": "browser:a", "mode": "snapshot", "version": 1, "threadId": "t1"},
        "value": {"url": "https://example.com"},
    }
    again = await send(threads, state())
    assert (again.routing.action, again.routing.signal, again.version) == ("skipped_unchanged", None, 1)
    delta = await send(threads, state(mode="delta", delta=None))
    assert (delta.routing.action, delta.version) == ("persist", 2)
    assert delta.routing.signal.metadata["delta"] is None and "value" not in delta.routing.signal.metadata
    other_lane = await send(threads, state(lane="editor"))
    assert (other_lane.routing.action, other_lane.version) == ("persist", 1)
    changed = await send(threads, state("browser:b"))
    assert (changed.routing.action, changed.version) == ("persist", 3)


async def test_bad_requests_and_missing_threads(threads: ThreadRuntime) -> None:
    with pytest.raises(InvalidArgument) as info:
        await send(threads, state("", lane="", attributes={"deep": {"x": 1}}))
    assert [v.field for v in info.value.violations] == ["lane", "cache_key", "attributes[0].value"]
    with pytest.raises(NotFound) as missing:
        await send(threads, state(thread_id="nope"))
    assert missing.value.reason == "THREAD_NOT_FOUND"
    with pytest.raises(InvalidArgument):  # the signal itself is checked before anything is stored
        await send(threads, state(tag_name="not a tag"))
    stored = await threads.storage.get_thread("t1")
    assert stored is not None and "agentd" not in stored.metadata
