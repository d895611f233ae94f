"""The model read ahead for a batching stream processor: every event in
order, batches of what is waiting offered first, the model's failure raised
where it happened, never a hang when the model's stream is cancelled."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.runtime.chunks import TextDelta
from agentd.runtime.loop.readahead import ReadAhead


async def model(count: int, fail_at: int | None = None) -> AsyncIterator[Any]:
    for i in range(count):
        if i == fail_at:
            raise ValueError("provider failed")
        yield TextDelta("t", f"w{i}")
        await asyncio.sleep(0)


async def test_every_event_in_order_with_the_waiting_ones_offered_as_batches() -> None:
    batches: list[list[str]] = []

    async def on_batch(events: list[Any]) -> None:
        batches.append([e.text for e in events])
        await asyncio.sleep(0.01)  # a round trip: the model runs ahead meanwhile

    reader = ReadAhead(model(200), on_batch, limit=16)
    got: list[str] = []
    async for event in reader:
        got.append(event.text)
        if len(got) == 1:
            await asyncio.sleep(0.01)  # the first part's own round trip: the model runs ahead meanwhile
    assert got == [f"w{i}" for i in range(200)]
    assert batches and max(len(b) for b in batches) == 16
    offered = [w for b in batches for w in b]
    assert offered == sorted(offered, key=lambda w: int(w[1:]))  # in order, never twice


async def test_the_models_failure_comes_after_the_events_before_it() -> None:
    async def on_batch(events: list[Any]) -> None:
        await asyncio.sleep(0)

    got: list[str] = []
    with pytest.raises(ValueError, match="provider failed"):
        async for event in ReadAhead(model(10, fail_at=5), on_batch):
            got.append(event.text)
    assert got == ["w0", "w1", "w2", "w3", "w4"]


async def test_a_cancelled_model_stream_ends_the_read_instead_of_hanging() -> None:
    async def stuck() -> AsyncIterator[Any]:
        yield TextDelta("t", "first")
        await asyncio.Event().wait()
        yield TextDelta("t", "never")

    async def on_batch(events: list[Any]) -> None:
        return None

    reader = ReadAhead(stuck(), on_batch)
    assert (await anext(reader)).text == "first"
    waiting = asyncio.ensure_future(anext(reader))
    await asyncio.sleep(0.01)
    assert reader._task is not None
    reader._task.cancel()  # as if something else cancelled the model's task
    with pytest.raises(RuntimeError, match="cancelled"):
        await asyncio.wait_for(waiting, 5)


async def test_close_stops_reading_the_model() -> None:
    pulled: list[int] = []

    async def endless() -> AsyncIterator[Any]:
        i = 0
        while True:
            pulled.append(i)
            yield TextDelta("t", str(i))
            i += 1

    async def on_batch(events: list[Any]) -> None:
        return None

    reader = ReadAhead(endless(), on_batch, limit=8)
    await anext(reader)
    reader.close()
    await asyncio.sleep(0.01)
    seen = len(pulled)
    await asyncio.sleep(0.01)
    assert len(pulled) == seen <= 10  # bounded by the queue, and stopped
