"""Reading a model's events ahead, in batches, for a stream processor that
answers many parts at once (a remote processor: one round trip per batch,
not per chunk).

`ReadAhead` pulls the model's stream in its own task into a bounded queue
(the model runs at most `limit` events ahead); each time the run takes an
event and more are waiting, it hands every waiting event to `on_batch` first
(the runner's prefetch), then yields them one by one, as the model's own
stream would. Used only when such a processor is first in the output lane;
otherwise the run reads the model directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

from agentd.runtime.models.base import ModelEvent

#: Events the model may run ahead of the run; also the largest batch.
LIMIT: Final = 64


class _End:
    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class ReadAhead:
    def __init__(
        self,
        events: AsyncIterator[ModelEvent],
        on_batch: Callable[[list[ModelEvent]], Awaitable[None]],
        limit: int = LIMIT,
    ) -> None:
        self._events = events
        self._on_batch = on_batch
        self._queue: asyncio.Queue[ModelEvent | _End] = asyncio.Queue(limit)
        self._ready: list[ModelEvent | _End] = []
        self._task: asyncio.Task[None] | None = None

    async def _pump(self) -> None:
        try:
            async for event in self._events:
                await self._queue.put(event)
        except asyncio.CancelledError:
            raise  # close(): the run stopped reading (or the task was cancelled: see _ended)
        except BaseException as exc:  # the model's failure, raised where the run reads it
            await self._queue.put(_End(exc))
            return
        await self._queue.put(_End())

    def _ended(self, task: asyncio.Task[None]) -> None:
        # A pump cancelled by anything but close() leaves no end in the queue:
        # one is put there, so the run is never left waiting for the model.
        if task.cancelled() and self._task is task:
            try:
                self._queue.put_nowait(_End(RuntimeError("the model's stream was cancelled")))
            except asyncio.QueueFull:
                pass  # the run has events to read first; __anext__ sees the task done after them

    def __aiter__(self) -> ReadAhead:
        return self

    async def __anext__(self) -> ModelEvent:
        if not self._ready:
            if self._task is None:
                self._task = asyncio.get_running_loop().create_task(self._pump())
                self._task.add_done_callback(self._ended)
            elif self._task.done() and self._queue.empty():
                raise RuntimeError("the model's stream was cancelled")
            self._ready.append(await self._queue.get())
            while not self._queue.empty():
                self._ready.append(self._queue.get_nowait())
            batch = [e for e in self._ready if not isinstance(e, _End)]
            if len(batch) > 1:
                await self._on_batch(batch)
        item = self._ready.pop(0)
        if isinstance(item, _End):
            if item.error is not None:
                raise item.error
            raise StopAsyncIteration
        return item

    def close(self) -> None:
        """Stops reading the model (the run stopped reading it first)."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
