"""Conversation storage: threads owned by resources, and their messages.

One interface, three implementations run against one test suite: in-memory
(here; tests), SQLite (the embedded default) and Redis (replicas sharing
state), both in `agentd.backends`.

Messages are ordered by (created_at, insertion sequence): the sequence is
assigned by the store when a message is first saved and never changes, so a
page walk is stable while other writers insert (keyset pagination: every
message present when the walk starts is returned exactly once, a message
inserted during the walk at most once).
"""

from __future__ import annotations

import asyncio
import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal, TypeVar

from agentd.runtime.messages import JSON, Message, Signal, SignalPart, utcnow

Order = Literal["asc", "desc"]
R = TypeVar("R")
#: `update_thread_metadata`'s step: the thread's current metadata (a copy, free
#: to change) to the new metadata (None: leave the thread as it is) and a result.
MetadataUpdate = Callable[[dict[str, JSON]], tuple[dict[str, JSON] | None, R]]


@dataclass
class Thread:
    """A conversation thread of a resource, with its title and metadata."""

    id: str
    resource_id: str
    title: str = ""
    metadata: dict[str, JSON] = field(default_factory=dict)
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)


@dataclass(frozen=True)
class MessageQuery:
    """Which of a thread's messages to read, and how many."""

    thread_id: str
    #: At most this many messages (None: all).
    limit: int | None = 40
    order: Order = "asc"
    #: Opaque cursor from the previous page (`MessagePage.next_cursor`).
    cursor: str | None = None
    #: Inclusive bounds on created_at.
    start: datetime | None = None
    end: datetime | None = None
    #: Include reactive (system-reminder) signal rows, hidden by default.
    include_system_reminders: bool = False


@dataclass
class MessagePage:
    """A page of a thread's messages."""

    messages: list[Message]
    #: None on the last page.
    next_cursor: str | None = None


@dataclass
class ThreadPage:
    """A page of a resource's threads."""

    threads: list[Thread]
    next_cursor: str | None = None


def is_system_reminder(message: Message) -> bool:
    """A reactive signal row (or a legacy reminder row): hidden from listings
    and caller-facing recall unless asked for, still re-rendered for the model."""
    for part in message.parts:
        if isinstance(part, SignalPart) and getattr(part.signal, "type", None) == "reactive":
            return True
    return bool(message.metadata.get("systemReminder"))


@dataclass
class PendingSignal:
    """A signal acknowledged (deliver or queue) but not yet through a run that
    ended: kept until that run ends, and replayed into a new run when the server
    restarts, so an acknowledged signal is never lost."""

    signal: Signal
    agent_id: str
    resource_id: str
    thread_id: str
    created_at: datetime = field(default_factory=utcnow)


@dataclass
class BackgroundTask:
    """Background work in flight (a background tool's call), recorded when it
    starts and deleted once its result is reconciled into the thread: a
    record left behind by a process that stopped is reported failed."""

    task_id: str
    agent_id: str
    resource_id: str
    thread_id: str
    #: The run that made the call, and the assistant message holding the call.
    run_id: str
    message_id: str
    tool_call_id: str
    tool_name: str
    args: JSON = None
    #: The replica running it (its lease key is `background_lease(task_id)`).
    replica: str = ""
    created_at: datetime = field(default_factory=utcnow)


class StorageError(Exception):
    """The backend failed (unreachable, corrupt row)."""


class ThreadExists(Exception):
    """create_thread: the id is taken."""


class Storage(ABC):
    """Thread and message storage. Returned objects are copies: changing them
    never changes what is stored."""

    #: "memory", "sqlite" or "redis".
    backend: str = ""
    #: Several processes (replicas) may use it at once.
    shared: bool = False

    # ------------------------------------------------------------ threads

    @abstractmethod
    async def get_thread(self, thread_id: str) -> Thread | None: ...

    @abstractmethod
    async def create_thread(self, thread: Thread) -> Thread:
        """Stores a new thread; raises ThreadExists when the id is taken."""

    @abstractmethod
    async def save_thread(self, thread: Thread) -> Thread:
        """Creates or replaces a thread (keeping created_at of an existing one)."""

    @abstractmethod
    async def update_thread(
        self, thread_id: str, *, title: str | None = None, metadata: dict[str, JSON] | None = None
    ) -> Thread | None:
        """Changes the given fields and updated_at; None when the thread does not exist."""

    @abstractmethod
    async def update_thread_metadata(self, thread_id: str, fn: MetadataUpdate[R]) -> tuple[Thread, R] | None:
        """Read-modify-write of the thread's metadata as one atomic step: `fn`
        sees the stored metadata and nothing else writes the thread until its
        answer is stored (when it returns new metadata, updated_at changes too).
        Returns the thread as it then is and `fn`'s result; None when the thread
        does not exist. An exception from `fn` changes nothing and propagates.
        `fn` must be quick and have no side effects: a backend may call it on
        another thread (SQLite) or again after a conflict (Redis)."""

    @abstractmethod
    async def delete_thread(self, thread_id: str) -> bool:
        """Deletes the thread and its messages; False when it did not exist."""

    async def list_threads(
        self,
        resource_id: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        metadata: dict[str, JSON] | None = None,
    ) -> ThreadPage:
        """A resource's threads, newest first; `metadata`: equal values for each key."""
        limit = max(limit, 0)
        before = None if cursor is None else decode_thread_cursor(cursor)
        # One more than the page: whether there is a next one.
        threads = await self.select_threads(resource_id, before, limit + 1, metadata or {})
        page = threads[:limit]
        return ThreadPage(page, encode_thread_cursor(page[-1]) if len(threads) > limit and page else None)

    @abstractmethod
    async def select_threads(
        self, resource_id: str, before: tuple[datetime, str] | None, count: int, metadata: dict[str, JSON]
    ) -> list[Thread]:
        """At most `count` of the resource's threads, newest first (by
        created_at, then id), those before the (created_at, id) position
        `before` when given, whose metadata has `metadata`'s values."""

    # ------------------------------------------------------------ messages

    @abstractmethod
    async def save_messages(self, messages: Sequence[Message]) -> None:
        """Inserts or replaces by id (an existing message keeps its place in the
        order). Each message must carry thread_id; the thread must exist."""

    @abstractmethod
    async def list_messages(self, query: MessageQuery) -> MessagePage: ...

    @abstractmethod
    async def get_messages(self, ids: Sequence[str]) -> list[Message]:
        """The messages with these ids that exist, in the order of `ids`."""

    @abstractmethod
    async def delete_messages(self, ids: Sequence[str]) -> int: ...

    async def last_messages(
        self, thread_id: str, count: int, *, include_system_reminders: bool = True
    ) -> list[Message]:
        """The newest `count` messages that are not signal or system rows, with
        any signal rows in between, oldest first (the history a run recalls)."""
        picked: list[Message] = []
        real = 0
        cursor: str | None = None
        while real < count:
            page = await self.list_messages(
                MessageQuery(
                    thread_id,
                    limit=max(20, count),
                    order="desc",
                    cursor=cursor,
                    include_system_reminders=include_system_reminders,
                )
            )
            for message in page.messages:
                if message.role in ("signal", "system"):
                    if real < count:
                        picked.append(message)
                    continue
                if real == count:
                    break
                picked.append(message)
                real += 1
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        picked.reverse()
        return picked

    # ------------------------------------------------------------ the outbox of acknowledged signals

    @abstractmethod
    async def save_pending(self, entry: PendingSignal) -> None:
        """Commits an acknowledged signal before its answer is sent."""

    @abstractmethod
    async def delete_pending(self, signal_ids: Sequence[str]) -> None: ...

    @abstractmethod
    async def list_pending(self) -> list[PendingSignal]:
        """Oldest first."""

    # ------------------------------------------------------------ background work in flight

    @abstractmethod
    async def save_background_task(self, task: BackgroundTask) -> None:
        """Records background work as it starts (replacing one of the same id)."""

    @abstractmethod
    async def delete_background_task(self, task_id: str) -> None: ...

    @abstractmethod
    async def list_background_tasks(self) -> list[BackgroundTask]:
        """Oldest first."""

    async def open(self) -> None:  # noqa: B027 (optional)
        """Connects and migrates now, so a bad path or schema fails at start-up."""

    async def close(self) -> None:  # noqa: B027 (optional)
        """Releases connections."""


# ---------------------------------------------------------------- in memory


class InMemoryStorage(Storage):
    """For tests and single-process experiments: lost when the process exits."""

    backend = "memory"

    def __init__(self) -> None:
        self._threads: dict[str, Thread] = {}
        self._messages: dict[str, tuple[int, Message]] = {}  # id -> (sequence, message)
        self._sequence = 0
        self._lock = asyncio.Lock()
        self._pending: dict[str, PendingSignal] = {}
        self._background: dict[str, BackgroundTask] = {}

    async def get_thread(self, thread_id: str) -> Thread | None:
        thread = self._threads.get(thread_id)
        return copy.deepcopy(thread) if thread else None

    async def create_thread(self, thread: Thread) -> Thread:
        async with self._lock:
            if thread.id in self._threads:
                raise ThreadExists(thread.id)
            self._threads[thread.id] = copy.deepcopy(thread)
        return copy.deepcopy(thread)

    async def save_thread(self, thread: Thread) -> Thread:
        async with self._lock:
            existing = self._threads.get(thread.id)
            stored = (
                replace(copy.deepcopy(thread), created_at=existing.created_at) if existing else copy.deepcopy(thread)
            )
            self._threads[thread.id] = stored
        return copy.deepcopy(stored)

    async def update_thread(
        self, thread_id: str, *, title: str | None = None, metadata: dict[str, JSON] | None = None
    ) -> Thread | None:
        async with self._lock:
            thread = self._threads.get(thread_id)
            if thread is None:
                return None
            if title is not None:
                thread.title = title
            if metadata is not None:
                thread.metadata = copy.deepcopy(metadata)
            thread.updated_at = utcnow()
            return copy.deepcopy(thread)

    async def update_thread_metadata(self, thread_id: str, fn: MetadataUpdate[R]) -> tuple[Thread, R] | None:
        async with self._lock:  # every write takes it: nothing changes the thread between read and write
            thread = self._threads.get(thread_id)
            if thread is None:
                return None
            metadata, result = fn(copy.deepcopy(thread.metadata))
            if metadata is not None:
                thread.metadata = copy.deepcopy(metadata)
                thread.updated_at = utcnow()
            return copy.deepcopy(thread), result

    async def delete_thread(self, thread_id: str) -> bool:
        async with self._lock:
            if self._threads.pop(thread_id, None) is None:
                return False
            for mid in [m for m, (_, msg) in self._messages.items() if msg.thread_id == thread_id]:
                del self._messages[mid]
            return True

    async def select_threads(
        self, resource_id: str, before: tuple[datetime, str] | None, count: int, metadata: dict[str, JSON]
    ) -> list[Thread]:
        threads = sorted(
            (
                t
                for t in self._threads.values()
                if t.resource_id == resource_id and all(t.metadata.get(k) == v for k, v in metadata.items())
            ),
            key=lambda t: (t.created_at, t.id),
            reverse=True,
        )
        if before is not None:  # instants, not strings: offsets differ
            threads = [t for t in threads if (t.created_at, t.id) < before]
        return [copy.deepcopy(t) for t in threads[:count]]

    async def save_messages(self, messages: Sequence[Message]) -> None:
        async with self._lock:
            for message in messages:
                if not message.thread_id or message.thread_id not in self._threads:
                    raise StorageError(f"message {message.id}: thread {message.thread_id!r} does not exist")
            for message in messages:
                existing = self._messages.get(message.id)
                if existing is None:
                    self._sequence += 1
                    sequence = self._sequence
                else:
                    sequence = existing[0]
                self._messages[message.id] = (sequence, copy.deepcopy(message))

    async def list_messages(self, query: MessageQuery) -> MessagePage:
        rows = [
            (m.created_at, seq, m)
            for seq, m in self._messages.values()
            if m.thread_id == query.thread_id
            and (query.start is None or m.created_at >= query.start)
            and (query.end is None or m.created_at <= query.end)
            and (query.include_system_reminders or not is_system_reminder(m))
        ]
        rows.sort(key=lambda r: (r[0], r[1]), reverse=query.order == "desc")
        if query.cursor is not None:
            position = decode_message_cursor(query.cursor)  # instants, not strings: offsets differ
            if query.order == "asc":
                rows = [r for r in rows if (r[0], r[1]) > position]
            else:
                rows = [r for r in rows if (r[0], r[1]) < position]
        page = rows if query.limit is None else rows[: query.limit]
        more = query.limit is not None and len(rows) > query.limit
        next_cursor = encode_message_cursor(page[-1][0], page[-1][1]) if more and page else None
        return MessagePage([copy.deepcopy(r[2]) for r in page], next_cursor)

    async def get_messages(self, ids: Sequence[str]) -> list[Message]:
        return [copy.deepcopy(self._messages[i][1]) for i in ids if i in self._messages]

    async def delete_messages(self, ids: Sequence[str]) -> int:
        async with self._lock:
            return sum(self._messages.pop(i, None) is not None for i in ids)

    async def save_pending(self, entry: PendingSignal) -> None:
        self._pending[entry.signal.id] = copy.deepcopy(entry)

    async def delete_pending(self, signal_ids: Sequence[str]) -> None:
        for signal_id in signal_ids:
            self._pending.pop(signal_id, None)

    async def list_pending(self) -> list[PendingSignal]:
        return sorted((copy.deepcopy(e) for e in self._pending.values()), key=lambda e: e.created_at)

    async def save_background_task(self, task: BackgroundTask) -> None:
        self._background[task.task_id] = copy.deepcopy(task)

    async def delete_background_task(self, task_id: str) -> None:
        self._background.pop(task_id, None)

    async def list_background_tasks(self) -> list[BackgroundTask]:
        return sorted((copy.deepcopy(t) for t in self._background.values()), key=lambda t: t.created_at)


# ---------------------------------------------------------------- cursors (shared by every backend)


def encode_message_cursor(created_at: datetime, sequence: int) -> str:
    return f"{created_at.isoformat()}|{sequence}"


def decode_message_cursor(cursor: str) -> tuple[datetime, int]:
    """(created_at, sequence); ValueError for anything else."""
    when, _, sequence = cursor.rpartition("|")
    return datetime.fromisoformat(when), int(sequence)


def encode_thread_cursor(thread: Thread) -> str:
    return f"{thread.created_at.isoformat()}|{thread.id}"


def decode_thread_cursor(cursor: str) -> tuple[datetime, str]:
    """(created_at, thread id); ValueError for anything else."""
    when, sep, thread_id = cursor.partition("|")
    if not sep:
        raise ValueError("not a thread cursor")
    return datetime.fromisoformat(when), thread_id
