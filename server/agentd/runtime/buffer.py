"""A run's chunk log: the run appends, any number of readers follow it.

Readers never slow the run down: each one keeps its own position, and
`batches()` hands a reader everything that is ready in one list, so a reader
that falls behind catches up in few, large batches.

A reader that pays per batch (a gRPC message, a log write) may also linger,
as Nagle and Kafka's linger.ms do: while chunks come faster than it hands
them on, it waits a short bound for more before it takes a small batch, so a
fast run yields few large batches. The first batch, and one after a pause,
is never held.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator

from agentd.runtime.chunks import Chunk

__all__ = ["DEFAULT_LINGER", "ChunkBuffer"]

#: Seconds a lingering reader waits for more chunks (see `ChunkBuffer.batches`).
DEFAULT_LINGER = 0.002


class ChunkBuffer:
    __slots__ = ("_chunks", "_closed", "_waiters")

    def __init__(self) -> None:
        self._chunks: list[Chunk] = []
        self._closed = False
        #: Readers' futures by the length of the log that wakes them: an append
        #: wakes only those waiting for it (a lingering reader is not woken per chunk).
        #: A linger that timed out leaves its future to a later append or the
        #: close: they are all within `max_batch` of the log's end, so bounded.
        #: (None until a reader first waits: a Generate's run has none.)
        self._waiters: dict[int, asyncio.Future[None]] | None = None

    def append(self, chunk: Chunk) -> None:
        if self._closed:
            raise RuntimeError("append to a closed chunk buffer")
        chunks = self._chunks
        chunks.append(chunk)
        if self._waiters:
            waiter = self._waiters.pop(len(chunks), None)
            if waiter is not None and not waiter.done():
                waiter.set_result(None)

    def close(self) -> None:
        self._closed = True
        waiters = self._waiters
        if not waiters:
            return
        self._waiters = None
        for waiter in waiters.values():
            if not waiter.done():
                waiter.set_result(None)

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._chunks)

    def snapshot(self) -> list[Chunk]:
        return list(self._chunks)

    async def _until_length(self, length: int) -> None:
        """Returns once the log holds `length` chunks or is closed."""
        while len(self._chunks) < length and not self._closed:
            waiters = self._waiters
            if waiters is None:
                waiters = self._waiters = {}
            waiter = waiters.get(length)
            if waiter is None:
                waiter = waiters[length] = asyncio.get_running_loop().create_future()
            # Shared by every reader waiting for this length: one reader's cancellation is not theirs.
            await asyncio.shield(waiter)

    async def wait_beyond(self, index: int) -> None:
        """Returns once the log is longer than `index` or closed."""
        await self._until_length(index + 1)

    async def batches(self, start: int = 0, max_batch: int = 512, linger: float = 0.0) -> AsyncIterator[list[Chunk]]:
        """Everything ready since the last batch, in order, until the log closes.

        `linger` > 0: when chunks arrived within `linger` seconds of the last
        batch being taken (the run is producing faster than this reader hands
        batches on), wait up to `linger` seconds more, until `max_batch` are
        ready or the log closes, before taking them."""
        index = start
        loop = asyncio.get_running_loop()
        taken_at = -math.inf
        while True:
            await self._until_length(index + 1)
            if linger > 0 and not self._closed and len(self._chunks) - index < max_batch:
                now = loop.time()
                if now - taken_at < linger:
                    try:
                        async with asyncio.timeout_at(now + linger):
                            await self._until_length(index + max_batch)
                    except TimeoutError:
                        pass
            if index >= len(self._chunks):
                return
            end = min(len(self._chunks), index + max_batch)
            batch = self._chunks[index:end]
            index = end
            yield batch
            if linger > 0:
                taken_at = loop.time()
