"""ThreadLog: each thread's chunks with offsets, for its subscribers.

    append(thread, chunks)                      logs them in order, pushes them to followers
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
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from agentd.runtime.chunks import Chunk
from agentd.runtime.errors import InvalidArgument, OutOfRange
from agentd.runtime.threads.subscriber import Subscriber

__all__ = ["LocalThreadLog", "LogJoin", "ThreadLog", "check_resume"]


@dataclass(frozen=True)
class LogJoin:
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


@dataclass
class _Log:
    epoch: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: Offsets start from the wall clock in microseconds: never reused across restarts.
    next_offset: int = field(default_factory=lambda: time.time_ns() // 1000)
    entries: deque[Chunk] = field(default_factory=deque)
    #: The highest offset no longer in the log (0: nothing dropped yet).
    dropped_until: int = 0
    subscribers: set[Subscriber] = field(default_factory=set)

    @property
    def last_offset(self) -> int:
        return self.entries[-1].offset if self.entries else 0


class LocalThreadLog(ThreadLog):
    """Logs in this process. Nothing here awaits, so a join reads its replay and
    registers its subscriber with no chunk logged in between."""

    def __init__(self, *, retention: int, subscriber_buffer: int) -> None:
        self.retention = retention
        self.subscriber_buffer = subscriber_buffer
        self._logs: dict[str, _Log] = {}

    def _log(self, thread_id: str) -> _Log:
        log = self._logs.get(thread_id)
        if log is None:
            log = self._logs[thread_id] = _Log()
        return log

    async def append(self, thread_id: str, chunks: Sequence[Chunk]) -> None:
        log = self._log(thread_id)
        for chunk in chunks:
            logged = replace(chunk, offset=log.next_offset)
            log.next_offset += 1
            log.entries.append(logged)
            while len(log.entries) > self.retention:
                log.dropped_until = log.entries.popleft().offset
            for subscriber in list(log.subscribers):
                subscriber.push(logged)

    async def join(self, thread_id: str, *, resume_epoch: str | None, after_offset: int | None) -> LogJoin:
        log = self._log(thread_id)
        replay: list[Chunk] = []
        if resume_epoch is not None:
            after = after_offset or 0
            check_resume(log.epoch, log.dropped_until, log.last_offset, resume_epoch, after)
            replay = [c for c in log.entries if c.offset > after]
        subscriber = Subscriber(self.subscriber_buffer)
        log.subscribers.add(subscriber)
        return LogJoin(log.epoch, log.last_offset, replay, subscriber)

    def leave(self, thread_id: str, subscriber: Subscriber) -> None:
        log = self._logs.get(thread_id)
        if log is not None:
            log.subscribers.discard(subscriber)
        subscriber.close()

    async def close(self) -> None:
        for log in self._logs.values():
            for subscriber in list(log.subscribers):
                subscriber.close()
