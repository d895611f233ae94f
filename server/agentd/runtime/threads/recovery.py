"""Acknowledged signals left in the outbox while the process lives on: a run
that could not save what it took (storage failed under it), or a run whose
outbox entries could not be cleared. Their threads are taken over again here
once storage answers, so nothing acknowledged waits for a restart to run (a
takeover skips what a run already saved)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

__all__ = ["OutboxRecovery"]

log = logging.getLogger("agentd.threads")

#: The first retry's delay, and the longest (doubling while storage stays silent).
FIRST_DELAY = 0.2
MAX_DELAY = 5.0


class OutboxRecovery:
    """Threads with acknowledged signals no run of this process holds any more.

    `take_over(resource_id, thread_id)` replays a thread's pending signals;
    `idle(thread_id)` is true once nothing in this process uses the thread (a
    thread still in use is looked at again later: its state may hold them)."""

    def __init__(
        self,
        take_over: Callable[[str, str], Awaitable[int]],
        idle: Callable[[str], bool],
        *,
        first_delay: float = FIRST_DELAY,
        max_delay: float = MAX_DELAY,
    ) -> None:
        self.take_over = take_over
        self.idle = idle
        self.first_delay = first_delay
        self.max_delay = max_delay
        #: Thread id -> (resource id, how often it was added: a takeover clears only what it saw).
        self._threads: dict[str, tuple[str, int]] = {}
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._taking_over = False

    def __len__(self) -> int:
        return len(self._threads)

    def add(self, resource_id: str, thread_id: str) -> None:
        if self._closed:
            return  # a restart replays them
        _, added = self._threads.get(thread_id, ("", 0))
        self._threads[thread_id] = (resource_id, added + 1)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._retry(), name="outbox recovery")

    async def _retry(self) -> None:
        delay = self.first_delay
        while self._threads and not self._closed:
            await asyncio.sleep(delay)
            for thread_id, (resource_id, added) in list(self._threads.items()):
                if self._closed:
                    return
                if not self.idle(thread_id):
                    continue
                self._taking_over = True
                try:
                    replayed = await self.take_over(resource_id, thread_id)
                except Exception as exc:  # storage is still silent: later, less often
                    log.info("thread %s: pending signals not replayed yet: %s", thread_id, exc)
                    delay = min(2 * delay, self.max_delay)
                    break
                finally:
                    self._taking_over = False
                if self._threads.get(thread_id, ("", 0))[1] == added:
                    del self._threads[thread_id]
                if replayed:
                    log.warning(
                        "thread %s: replayed %d acknowledged signal(s) after a storage failure", thread_id, replayed
                    )
            else:
                delay = self.first_delay

    async def close(self) -> None:
        """Stops retrying (a restart replays what is left)."""
        self._closed = True
        task = self._task
        if task is None or task.done():
            return
        if self._taking_over:  # a storage command cut off mid-connect would leak its connection
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(task), 2.0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
