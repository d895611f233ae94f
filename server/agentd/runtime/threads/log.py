"""ThreadLog: each thread's chunks with offsets, for its subscribers.

    append(thread, chunks)                      logs them in order, pushes them to followers
    forget(thread)                              drops the thread's log (it was deleted)
    join(thread, resume_epoch, after_offset)    what to replay, and a live queue, with no gap
                                                and no duplicate between the two
    leave(thread, subscriber)                   ends a subscription
    close()                                     ends every subscription

`LocalThreadLog` keeps the logs in this process (one replica);
`agentd.runtime.threads.shared_log.SharedThreadLog` keeps them in the replicas'
shared Cluster, so a subscriber sees the same offsets on any replica.
"""

from __future__ import annotations

import time
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from agentd.runtime.chunks import Chunk
from agentd.runtime.errors import InvalidArgument, OutOfRange
from agentd.runtime.sizes import approximate_size
from agentd.runtime.threads.settings import ThreadSettings
from agentd.runtime.threads.subscriber import Subscriber

__all__ = ["LocalThreadLog", "LogJoin", "ThreadLog", "check_resume"]


@dataclass(frozen=True)
class LogJoin:
    """Where a subscriber joined a thread's log, and what it replays."""

    epoch: str
    #: The last logged offset when the subscriber joined (0: nothing logged).
    last_offset: int
    #: Logged chunks after the resume point, oldest first.
    replay: list[Chunk]
    subscriber: Subscriber


class ThreadLog(ABC):
    @abstractmethod
    async def append(self, thread_id: str, chunks: Sequence[Chunk]) -> None:
        """Logs `chunks` (offsets assigned by the log) and pushes them to the thread's subscribers."""

    @abstractmethod
    async def join(self, thread_id: str, *, resume_epoch: str | None, after_offset: int | None) -> LogJoin:
        """A new subscriber; with `resume_epoch`, the chunks after `after_offset` to replay
        (OUT_OF_RANGE RESUME_OFFSET_EXPIRED when the log no longer holds that point)."""

    @abstractmethod
    def leave(self, thread_id: str, subscriber: Subscriber) -> None: ...

    @abstractmethod
    def subscribers(self) -> int:
        """How many subscribers this process feeds (read off the event loop by
        a metrics collection: it only takes a snapshot)."""

    @abstractmethod
    async def forget(self, thread_id: str) -> None:
        """The thread was deleted: its log is gone (a resume into it is
        RESUME_OFFSET_EXPIRED); its subscribers stay for what comes next."""

    @abstractmethod
    async def close(self) -> None:
        """Ends every subscription (their streams answer UNAVAILABLE)."""


def check_resume(epoch: str, dropped_until: int, last_offset: int, resume_epoch: str, after: int) -> None:
    """The resume point must be in the log: same epoch, not trimmed, not past its end."""
    if resume_epoch != epoch or after < dropped_until:
        raise OutOfRange(
            "the thread's chunk log no longer holds that point; list the messages and subscribe again",
            "RESUME_OFFSET_EXPIRED",
            {"log_epoch": epoch, "dropped_until": str(dropped_until)},
        )
    if after > last_offset and last_offset:
        raise InvalidArgument.field("resume.after_offset", "is beyond the last offset of the thread's log")


def chunk_weight(chunk: Chunk) -> int:
    """A cheap estimate of a logged chunk's size in bytes: deltas (nearly every
    chunk) by their text, the rare others by their parts."""
    text = getattr(chunk.payload, "text", None)
    if isinstance(text, str) and type(chunk.payload).__name__.endswith("Delta"):
        return _CHUNK_OVERHEAD + len(text)
    return _CHUNK_OVERHEAD + approximate_size(chunk.payload)


#: What a logged chunk costs beyond its text (the objects, the deque slot).
_CHUNK_OVERHEAD = 320


@dataclass(slots=True)
class _Log:
    """One thread's logged chunks, bounded."""

    epoch: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: Offsets start from the wall clock in microseconds: never reused across restarts.
    next_offset: int = field(default_factory=lambda: time.time_ns() // 1000)
    #: The logged chunks, oldest first, and the chunk_weight of each: None
    #: until the first chunk, since most watched threads are idle and an empty
    #: deque is 760 bytes.
    entries: deque[Chunk] | None = None
    weights: deque[int] | None = None
    bytes: int = 0
    #: The highest offset no longer in the log (0: nothing dropped yet).
    dropped_until: int = 0
    subscribers: set[Subscriber] = field(default_factory=set)
    #: When the log last grew (monotonic seconds).
    touched: float = 0.0

    @property
    def last_offset(self) -> int:
        return self.entries[-1].offset if self.entries else 0

    @property
    def length(self) -> int:
        return len(self.entries) if self.entries else 0

    def add(self, chunk: Chunk) -> int:
        """Logs the chunk; its weight."""
        if self.entries is None or self.weights is None:
            self.entries, self.weights = deque(), deque()
        weight = chunk_weight(chunk)
        self.entries.append(chunk)
        self.weights.append(weight)
        self.bytes += weight
        return weight

    def drop_oldest(self) -> int:
        """Trims the oldest entry (there is one); the bytes freed."""
        assert self.entries and self.weights
        self.dropped_until = self.entries.popleft().offset
        weight = self.weights.popleft()
        self.bytes -= weight
        return weight


class LocalThreadLog(ThreadLog):
    """Logs in this process. Nothing here awaits, so a join reads its replay and
    registers its subscriber with no chunk logged in between.

    Bounded (ThreadSettings): each log holds at most `log_retention` chunks; a
    log nobody watches is dropped `log_idle_ttl` seconds after its last chunk;
    past `log_max_threads` logs or `log_max_bytes` in all, the least recently
    used unwatched logs go first (then
    the oldest chunks of watched ones). A dropped log comes back with a new
    epoch, so a resume into it is RESUME_OFFSET_EXPIRED, never a wrong replay."""

    def __init__(self, settings: ThreadSettings | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings or ThreadSettings()
        self.clock = clock
        #: Least recently grown first.
        self._logs: OrderedDict[str, _Log] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._logs)

    def subscribers(self) -> int:
        return sum(len(log.subscribers) for log in list(self._logs.values()))

    @property
    def bytes(self) -> int:
        return self._bytes

    def _log(self, thread_id: str) -> _Log:
        log = self._logs.get(thread_id)
        if log is None:
            log = self._logs[thread_id] = _Log(touched=self.clock())
        return log

    async def append(self, thread_id: str, chunks: Sequence[Chunk]) -> None:
        log = self._log(thread_id)
        log.touched = self.clock()
        self._logs.move_to_end(thread_id)
        for chunk in chunks:
            logged = replace(chunk, offset=log.next_offset)
            log.next_offset += 1
            self._bytes += log.add(logged)
            while log.length > self.settings.log_retention:
                self._bytes -= log.drop_oldest()
            for subscriber in list(log.subscribers):
                subscriber.push(logged)
        self._evict()

    async def join(self, thread_id: str, *, resume_epoch: str | None, after_offset: int | None) -> LogJoin:
        self._evict()
        log = self._log(thread_id)
        replay: list[Chunk] = []
        if resume_epoch is not None:
            after = after_offset or 0
            try:
                check_resume(log.epoch, log.dropped_until, log.last_offset, resume_epoch, after)
            except Exception:
                self._drop_if_unused(thread_id)
                raise
            replay = [c for c in log.entries or () if c.offset > after]
        subscriber = Subscriber(self.settings.subscriber_buffer)
        log.subscribers.add(subscriber)
        return LogJoin(log.epoch, log.last_offset, replay, subscriber)

    def leave(self, thread_id: str, subscriber: Subscriber) -> None:
        log = self._logs.get(thread_id)
        if log is not None:
            log.subscribers.discard(subscriber)
            self._drop_if_unused(thread_id)
        subscriber.close()

    async def forget(self, thread_id: str) -> None:
        log = self._logs.pop(thread_id, None)
        if log is None:
            return
        self._bytes -= log.bytes
        if log.subscribers:  # they stay on the thread id, on a new log
            fresh = self._logs[thread_id] = _Log(touched=self.clock(), subscribers=log.subscribers)
            fresh.next_offset = max(fresh.next_offset, log.next_offset)

    async def close(self) -> None:
        for log in self._logs.values():
            for subscriber in list(log.subscribers):
                subscriber.close()

    def _drop_if_unused(self, thread_id: str) -> None:
        """A log with nothing in it and nobody watching keeps no state."""
        log = self._logs.get(thread_id)
        if log is not None and not log.entries and not log.subscribers:
            del self._logs[thread_id]

    def _drop(self, thread_id: str) -> None:
        self._bytes -= self._logs.pop(thread_id).bytes

    def _evict(self) -> None:
        now = self.clock()
        # Idle logs nobody watches, oldest first (a watched one is passed over).
        for thread_id, log in list(self._logs.items()):
            if now - log.touched < self.settings.log_idle_ttl:
                break
            if not log.subscribers:
                self._drop(thread_id)
        if len(self._logs) <= self.settings.log_max_threads and self._bytes <= self.settings.log_max_bytes:
            return
        for thread_id, log in list(self._logs.items()):
            if len(self._logs) <= self.settings.log_max_threads and self._bytes <= self.settings.log_max_bytes:
                return
            if not log.subscribers:
                self._drop(thread_id)
        # Every log left is watched: trim the oldest chunks of the least recently used.
        for log in list(self._logs.values()):
            while log.entries and self._bytes > self.settings.log_max_bytes:
                self._bytes -= log.drop_oldest()
            if self._bytes <= self.settings.log_max_bytes:
                return
