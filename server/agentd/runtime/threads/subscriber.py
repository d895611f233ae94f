"""One subscription to a thread's chunk log: a bounded queue the log pushes
into, read as batches."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator

from agentd.runtime.chunks import Chunk

__all__ = ["DEFAULT_SUBSCRIBER_BUFFER", "Subscriber", "follow"]

#: Chunks a subscriber may lag before it is told it fell behind.
DEFAULT_SUBSCRIBER_BUFFER = 1024


class Subscriber:
    """One subscription's bounded queue of logged chunks."""

    def __init__(self, buffer: int = DEFAULT_SUBSCRIBER_BUFFER) -> None:
        self.buffer = buffer
        #: Chunks at or below this offset were already replayed: not pushed again.
        self.after = 0
        self.queue: deque[Chunk] = deque()
        self.fell_behind = False
        self.closed = False
        self._wake = asyncio.Event()

    def push(self, chunk: Chunk) -> None:
        if self.fell_behind or self.closed or chunk.offset <= self.after:
            return
        if len(self.queue) >= self.buffer:
            # Never block the run or other subscribers: this one resumes by offset.
            self.fell_behind = True
        else:
            self.queue.append(chunk)
        self._wake.set()

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    async def wait(self) -> None:
        await self._wake.wait()
        self._wake.clear()


async def follow(subscriber: Subscriber) -> AsyncIterator[list[Chunk]]:
    """Batches of live chunks until the subscriber closes or falls behind."""
    while True:
        if subscriber.queue:
            batch = list(subscriber.queue)
            subscriber.queue.clear()
            yield batch
            continue
        if subscriber.fell_behind or subscriber.closed:
            return
        await subscriber.wait()
