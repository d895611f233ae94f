"""ThreadOwnership: who may drive a thread, and how to reach the one who does.

    start(host)                 begins owning (answers peers, recovers what was left)
    begin(state, run)           takes the thread for a run (THREAD_BUSY when another has it)
    watch(handle)               aborts the run if its hold on the thread is lost
    abandon(state, run)         a run that could not start lets go
    finished(state, run)        a run ended; True when it still held the thread
    hand_on(state, run)         passes the thread to the next run of this process
    release(state)              lets go of the thread
    claim(state)                takes a free thread over (a dead owner's)
    holder(thread) / locate(run)  which replica holds a thread, or runs a run
    forward(replica, request)   asks that replica (None: it is gone)
    once(key, answer)           one answer per retried request

`LocalOwnership` is one process that owns every thread (nothing to do);
`agentd.runtime.threads.leased.LeasedOwnership` runs each thread under a lease
shared by several replicas.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agentd.runtime.cluster import RunMarker
from agentd.runtime.storage import PendingSignal, Storage
from agentd.runtime.threads.routing import Routing
from agentd.runtime.threads.state import LiveThread

if TYPE_CHECKING:
    from agentd.runtime.registry import RunRegistry
    from agentd.runtime.run import RunHandle
    from agentd.runtime.threads.peers import PeerAnswer, PeerRequest

__all__ = ["Holder", "LocalOwnership", "ThreadHost", "ThreadOwnership"]

#: Routing answers kept for retries of their request (a retry comes soon or not at all).
_REMEMBERED = 10_000


@dataclass(frozen=True)
class Holder:
    replica: str
    #: The holding run ("" while the replica holds the thread only to take it over).
    run_id: str


class ThreadHost(Protocol):
    """What an ownership needs of the thread runtime it serves."""

    storage: Storage
    runs: RunRegistry

    def busy(self, thread_id: str) -> bool:
        """This process is deciding about, or running, the thread."""

    async def take_over(self, resource_id: str, thread_id: str, entries: list[PendingSignal] | None) -> int:
        """Replays a free thread's acknowledged signals; how many."""

    async def answer_peer(self, request: PeerRequest) -> PeerAnswer: ...


class ThreadOwnership(ABC):
    #: This replica's id.
    replica_id: str
    #: How long routing keeps trying while a thread changes hands (seconds).
    patience: float = 0.0
    #: How long to wait before looking again at a thread held by a silent replica.
    poll_interval: float = 0.0

    @abstractmethod
    async def start(self, host: ThreadHost) -> int:
        """Begins owning threads; the number of acknowledged signals replayed."""

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    def current_run(self, thread_id: str) -> str | None:
        """The run this process holds the thread for, if any."""

    @abstractmethod
    async def begin(self, state: LiveThread, marker: RunMarker) -> None:
        """Takes the thread for `marker`'s run; FAILED_PRECONDITION THREAD_BUSY when
        another run holds it, UNAVAILABLE when the owners cannot be reached."""

    @abstractmethod
    def watch(self, state: LiveThread, handle: RunHandle) -> None: ...

    @abstractmethod
    async def abandon(self, state: LiveThread, run_id: str) -> None: ...

    @abstractmethod
    async def finished(self, state: LiveThread, run_id: str) -> bool: ...

    @abstractmethod
    async def hand_on(self, state: LiveThread, run_id: str) -> bool: ...

    @abstractmethod
    async def release(self, state: LiveThread) -> None: ...

    @abstractmethod
    async def claim(self, state: LiveThread) -> bool:
        """Holds a free thread for a takeover (ending a run its dead owner left marked)."""

    @abstractmethod
    async def holder(self, thread_id: str) -> Holder | None: ...

    @abstractmethod
    async def locate(self, run_id: str) -> RunMarker | None: ...

    @abstractmethod
    async def forward(self, replica: str, request: PeerRequest) -> PeerAnswer | None: ...

    @abstractmethod
    async def once(self, key: tuple[str, ...], answer: Callable[[], Awaitable[Routing]]) -> Routing: ...


class LocalOwnership(ThreadOwnership):
    """One process owns every thread: nothing to take, hand on or forward."""

    replica_id = "local"

    def __init__(self) -> None:
        self._answers: OrderedDict[Hashable, asyncio.Future[Routing]] = OrderedDict()

    async def start(self, host: ThreadHost) -> int:
        """Replays acknowledged signals that no finished run took (the previous
        process stopped first): each thread's, in order, one run at a time."""
        entries = await host.storage.list_pending()
        by_thread: dict[tuple[str, str], list[PendingSignal]] = {}
        for entry in entries:
            by_thread.setdefault((entry.resource_id, entry.thread_id), []).append(entry)
        for (resource_id, thread_id), pending in by_thread.items():
            await host.take_over(resource_id, thread_id, pending)
        return len(entries)

    async def close(self) -> None:
        return None

    def current_run(self, thread_id: str) -> str | None:
        return None

    async def begin(self, state: LiveThread, marker: RunMarker) -> None:
        return None

    def watch(self, state: LiveThread, handle: RunHandle) -> None:
        return None

    async def abandon(self, state: LiveThread, run_id: str) -> None:
        return None

    async def finished(self, state: LiveThread, run_id: str) -> bool:
        return True

    async def hand_on(self, state: LiveThread, run_id: str) -> bool:
        return True

    async def release(self, state: LiveThread) -> None:
        return None

    async def claim(self, state: LiveThread) -> bool:
        return True

    async def holder(self, thread_id: str) -> Holder | None:
        return None

    async def locate(self, run_id: str) -> RunMarker | None:
        return None

    async def forward(self, replica: str, request: PeerRequest) -> PeerAnswer | None:
        return None

    async def once(self, key: tuple[str, ...], answer: Callable[[], Awaitable[Routing]]) -> Routing:
        """A retry (same key) gets the first answer, and a copy arriving while
        the first is still being routed waits for it. A request that failed is
        forgotten, so a copy (or a later retry) is routed afresh."""
        while True:
            earlier = self._answers.get(key)
            if earlier is None:
                break
            await asyncio.wait([earlier])
            if not earlier.cancelled() and earlier.exception() is None:
                return earlier.result()
        future: asyncio.Future[Routing] = asyncio.get_running_loop().create_future()
        self._answers[key] = future
        while len(self._answers) > _REMEMBERED:
            self._answers.popitem(last=False)
        try:
            routing = await answer()
        except BaseException:
            if self._answers.get(key) is future:
                del self._answers[key]
            future.cancel()
            raise
        future.set_result(routing)
        return routing
