"""A run's chunk log: the run appends, any number of readers follow it.

Readers never slow the run down: each one keeps its own position, and
`batches()` hands a reader everything that is ready in one list, so a reader
that falls behind catches up in few, large batches.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from agentd.runtime.chunks import Chunk


class ChunkBuffer:
    __slots__ = ("_chunks", "_closed", "_waiter")

    def __init__(self) -> None:
        self._chunks: list[Chunk] = []
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None

    def append(self, chunk: Chunk) -> None:
        if self._closed:
            raise RuntimeError("append to a closed chunk buffer")
        self._chunks.append(chunk)
        self._wake()

    def close(self) -> None:
        self._closed = True
        self._wake()

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._chunks)

    def snapshot(self) -> list[Chunk]:
        return list(self._chunks)

    def _wake(self) -> None:
        # One shared future for all waiting readers: appending is O(1) however
        # many readers there are.
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    async def wait_beyond(self, index: int) -> None:
        """Returns once the log is longer than `index` or closed."""
        while len(self._chunks) <= index and not self._closed:
            if self._waiter is None:
                self._waiter = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._waiter)

    async def batches(self, start: int = 0, max_batch: int = 512) -> AsyncIterator[list[Chunk]]:
        """Everything ready since the last batch, in order, until the log closes."""
        index = start
        while True:
            await self.wait_beyond(index)
            if index >= len(self._chunks):
                return
            end = min(len(self._chunks), index + max_batch)
            batch = self._chunks[index:end]
            index = end
            yield batch
