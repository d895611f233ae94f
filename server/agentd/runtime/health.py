"""Whether the storage the thread services stand on answers: a probe that an
operator's health checks (and load balancers) can follow."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from agentd.runtime.storage import Storage, StorageError

__all__ = ["PROBE_THREAD_ID", "StorageProbe"]

log = logging.getLogger("agentd.health")

#: A thread id no caller can create (ids are at most 128 characters): read, never written.
PROBE_THREAD_ID = "~agentd-health-probe"


class StorageProbe:
    """Reads a thread that does not exist every `interval` seconds: a real
    round trip to the backend, without writing. `healthy` flips after one
    failed (or answered) probe, and `watch` reports each flip."""

    def __init__(self, storage: Storage, *, interval: float = 1.0, timeout: float = 2.0) -> None:
        if interval <= 0 or timeout <= 0:
            raise ValueError("interval and timeout must be positive")
        self.storage = storage
        self.interval = interval
        self.timeout = timeout
        self.healthy = True
        #: Why the last probe failed ("" while healthy).
        self.reason = ""

    async def check(self) -> bool:
        try:
            async with asyncio.timeout(self.timeout):
                await self.storage.get_thread(PROBE_THREAD_ID)
        except (StorageError, OSError, TimeoutError) as exc:
            self.reason = str(exc) or type(exc).__name__
            return False
        self.reason = ""
        return True

    async def watch(self, on_change: Callable[[bool], Awaitable[None]]) -> None:
        """Probes until cancelled, calling `on_change(healthy)` on every change."""
        while True:
            healthy = await self.check()
            if healthy != self.healthy:
                self.healthy = healthy
                if healthy:
                    log.warning("storage answers again: the thread services are serving")
                else:
                    log.error("storage does not answer (%s): the thread services are not serving", self.reason)
                await on_change(healthy)
            await asyncio.sleep(self.interval)
