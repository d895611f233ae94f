"""One subscription to a thread's chunk log: a bounded queue the log pushes
into, read as batches."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agentd.runtime.chunks import Chunk

__all__ = ["DEFAULT_SUBSCRIBER_BUFFER", "Subscriber", "follow"]

#: Chunks a subscriber may lag before it is told it fell behind.
DEFAULT_SUBSCRIBER_BUFFER = 1024


class Subscriber:
    """One subscription's bounded queue of logged chunks."""

    # Most subscriptions sit idle, thousands at a time: slots, a list, and a
    # future only while one waits (no Event and its deque) keep each small.
    __slots__ = ("_waiter", "_woken", "after", "buffer", "closed", "fell_behind", "queue")

    def __init__(self, buffer: int = DEFAULT_SUBSCRIBER_BUFFER) -> None:
        self.buffer = buffer
        #: Chunks at or below this offset were already replayed: not pushed again.
        self.after = 0
        self.queue: list[Chunk] = []
        self.fell_behind = False
        self.closed = False
        #: Something happened since the last wait returned.
        self._woken = False
        self._waiter: asyncio.Future[None] | None = None

    def push(self, chunk: Chunk) -> None:
        if self.fell_behind or self.closed or chunk.offset <= self.after:
            return
        if len(self.queue) >= self.buffer:
            # Never block the run or other subscribers: this one resumes by offset.
            self.fell_behind = True
        else:
            self.queue.append(chunk)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        self._woken = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Returns once something was pushed (or the subscriber closed) since it last returned."""
        if not self._woken:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        self._woken = False


async def follow(subscriber: Subscriber) -> AsyncIterator[list[Chunk]]:
    """Batches of live chunks until the subscriber closes or falls behind."""
    while True:
        if subscriber.queue:
            batch, subscriber.queue = subscriber.queue, []
            yield batch
            continue
        if subscriber.fell_behind or subscriber.closed:
            return
        await subscriber.wait()
