"""SharedThreadLog: the threads' chunk logs in the replicas' shared Cluster.

Every chunk goes to the thread's shared log, which assigns its offset; each
replica follows the logs its own subscribers watch with one blocking read, so
every subscriber sees the same chunks with the same offsets and can resume on
any replica.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentd.runtime.chunks import Chunk
from agentd.runtime.cluster import Cluster, ClusterError
from agentd.runtime.errors import BACKEND_RETRY_SECONDS, Unavailable
from agentd.runtime.threads.log import LogJoin, ThreadLog, check_resume
from agentd.runtime.threads.subscriber import Subscriber

__all__ = ["SharedThreadLog", "cluster_unavailable"]

log = logging.getLogger("agentd.replicas")

#: How long one blocking read of the followed logs waits (a new log interrupts it).
_FOLLOW_BLOCK_MS = 1000


def cluster_unavailable(error: Exception) -> Unavailable:
    return Unavailable(
        f"the replicas' shared state is unavailable: {error}", "CLUSTER_UNAVAILABLE", retry_after=BACKEND_RETRY_SECONDS
    )


@dataclass
class _Feed:
    """One followed log: the last offset read, and who gets its chunks."""

    cursor: int
    subscribers: set[Subscriber] = field(default_factory=set)


#: The first pause before an append is tried again, and the longest.
_RETRY_FIRST, _RETRY_MOST = 0.05, 1.0


class SharedThreadLog(ThreadLog):
    def __init__(self, cluster: Cluster, *, subscriber_buffer: int, patience: float = 15.0) -> None:
        """`patience`: how long an append is retried while the shared state is
        unreachable (the thread lease's time to live: a run still going after it
        has been aborted LEASE_LOST, and a later sweep logs its end)."""
        self.cluster = cluster
        self.subscriber_buffer = subscriber_buffer
        self.patience = patience
        #: When appends began failing (None while they succeed).
        self._failing_since: float | None = None
        self._feeds: dict[str, _Feed] = {}
        #: One join at a time per thread (a lock lives while someone holds or awaits it).
        self._joins: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._reader: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._closed = False

    def subscribers(self) -> int:
        return sum(len(feed.subscribers) for feed in list(self._feeds.values()))

    async def append(self, thread_id: str, chunks: Sequence[Chunk]) -> None:
        """Logs `chunks`, retried with backoff through a short outage, so live
        subscribers get them late rather than never; a run's later chunks wait
        behind them in its own buffer, in order. Once the shared state has been
        unreachable for `patience`, appends are given up at once (one try each)
        until one succeeds again: an outage costs a run's pump `patience` at most."""
        loop = asyncio.get_running_loop()
        pause = _RETRY_FIRST
        while True:
            try:
                await self.cluster.append(thread_id, chunks)
                self._failing_since = None
                return
            except ClusterError as exc:
                now = loop.time()
                if self._failing_since is None:
                    self._failing_since = now
                if self._closed or now + pause > self._failing_since + self.patience:
                    log.error("thread %s: %d chunk(s) not logged for subscribers: %s", thread_id, len(chunks), exc)
                    return
            await asyncio.sleep(pause)
            pause = min(pause * 2, _RETRY_MOST)

    async def join(self, thread_id: str, *, resume_epoch: str | None, after_offset: int | None) -> LogJoin:
        """Joins are one at a time per thread: a joiner on a followed log is
        registered before it reads its replay, so what the feed pushes meanwhile
        is either in the replay or after it (duplicates are dropped by offset)."""
        subscriber = Subscriber(self.subscriber_buffer)
        lock = self._joins.get(thread_id)
        if lock is None:
            lock = self._joins[thread_id] = asyncio.Lock()
        async with lock:
            feed = self._feeds.get(thread_id)
            if feed is not None:
                feed.subscribers.add(subscriber)
            try:
                epoch, last_offset, replay, floor = await self._catch_up(thread_id, resume_epoch, after_offset)
            except BaseException:
                if feed is not None:
                    feed.subscribers.discard(subscriber)
                raise
            if feed is None:
                self._feeds[thread_id] = _Feed(floor, {subscriber})
                self._follow()
            else:
                subscriber.queue = [c for c in subscriber.queue if c.offset > floor]
            subscriber.after = floor
        return LogJoin(epoch, last_offset, replay, subscriber)

    async def _catch_up(
        self, thread_id: str, resume_epoch: str | None, after_offset: int | None
    ) -> tuple[str, int, list[Chunk], int]:
        try:
            tail = await self.cluster.tail(thread_id)
            if resume_epoch is None:
                return tail.epoch, tail.last_offset, [], tail.last_offset
            after = after_offset or 0
            check_resume(tail.epoch, tail.dropped_until, tail.last_offset, resume_epoch, after)
            replay = await self.cluster.read(thread_id, after)
        except ClusterError as exc:
            raise cluster_unavailable(exc) from exc
        return tail.epoch, tail.last_offset, replay, replay[-1].offset if replay else after

    async def forget(self, thread_id: str) -> None:
        try:
            await self.cluster.delete_log(thread_id)
        except ClusterError as exc:
            raise cluster_unavailable(exc) from exc

    def leave(self, thread_id: str, subscriber: Subscriber) -> None:
        feed = self._feeds.get(thread_id)
        if feed is not None:
            feed.subscribers.discard(subscriber)
        subscriber.close()

    async def close(self) -> None:
        self._closed = True
        for feed in self._feeds.values():
            for subscriber in list(feed.subscribers):
                subscriber.close()
        for task in list(self._background):
            task.cancel()
        if self._reader is not None:
            self._reader.cancel()
        await asyncio.gather(*self._background, *([self._reader] if self._reader else []), return_exceptions=True)

    def _follow(self) -> None:
        """Makes the reader pick up a newly followed log at once."""
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read_forever(), name="follow thread logs")
        else:
            task = asyncio.get_running_loop().create_task(self.cluster.interrupt_read(), name="interrupt follow")
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _read_forever(self) -> None:
        while not self._closed:
            for thread_id in [t for t, f in self._feeds.items() if not f.subscribers]:
                del self._feeds[thread_id]
            if not self._feeds:
                return
            cursors = {t: f.cursor for t, f in self._feeds.items()}
            try:
                got = await self.cluster.read_new(cursors, _FOLLOW_BLOCK_MS)
            except ClusterError as exc:
                log.warning("following thread logs failed, retrying: %s", exc)
                await asyncio.sleep(0.2)
                continue
            for thread_id, chunks in got.items():
                feed = self._feeds.get(thread_id)
                if feed is None:
                    continue
                for chunk in chunks:
                    if chunk.offset <= feed.cursor:
                        continue
                    feed.cursor = chunk.offset
                    for subscriber in list(feed.subscribers):
                        subscriber.push(chunk)
