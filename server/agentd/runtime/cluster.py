"""What replicas share beside leases: each thread's chunk log, which run is
where, and requests from one replica to another.

`Cluster` is the interface the replicas' thread log and ownership
(runtime/threads/shared_log.py, leased.py) talk to;
`agentd.backends.redis_cluster.RedisCluster` implements it on Redis. Nothing
here knows about grpc or Redis.

    append(thread, chunks)        the chunks, logged in order; their offsets
    tail(thread)                  the log's epoch, last offset, last chunk, dropped point
    read(thread, after)           the logged chunks after an offset
    delete_log(thread)            the thread was deleted: so is its log
    read_new({thread: after})     blocks until some followed log grows (or the
                                  wait ends, or `interrupt_read` is called)
    claim_answer / store_answer   one routing answer per retried request, whichever
    recall_answer / drop_answer   replica the retry reaches
    mark_running / unmark         which replica runs which run on which thread
    running(thread) / run_marker(run) / all_running()
    serve(handler)                answers other replicas' requests
    request(replica, message)     asks one replica; PeerGone when nobody listens

Offsets are assigned by the log itself, so any replica may append (the lease
holder writes a run's chunks; a replica taking over writes the lost run's end).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentd.runtime import errors as errors_mod
from agentd.runtime.chunks import Chunk
from agentd.runtime.errors import AgentdError, FieldViolation

__all__ = [
    "PENDING",
    "Cluster",
    "ClusterError",
    "Handler",
    "LogTail",
    "PeerGone",
    "PeerTimeout",
    "RunMarker",
    "error_from_wire",
    "error_to_wire",
]

#: Answers one request from another replica (any value the codec carries) with a reply.
Handler = Callable[[Any], Awaitable[Any]]

#: What `recall_answer` returns while the claimed answer is being worked out.
PENDING: Any = object()


class ClusterError(Exception):
    """The shared backend failed (unreachable, timed out): the outcome is unknown."""


class PeerGone(ClusterError):
    """No replica by that id is listening: it stopped or died."""


class PeerTimeout(ClusterError):
    """The replica did not answer in time."""


@dataclass(frozen=True)
class RunMarker:
    """A run in flight: kept while it runs, so that if its replica dies the
    replica taking over knows which run to end."""

    run_id: str
    thread_id: str
    resource_id: str
    agent_id: str
    replica: str


@dataclass(frozen=True)
class LogTail:
    """The end of a thread's shared log: its epoch, last offset and what was trimmed."""

    epoch: str
    #: The last logged offset (0: nothing logged).
    last_offset: int
    #: The highest offset trimmed away (0: nothing dropped).
    dropped_until: int
    last: Chunk | None = None


class Cluster(ABC):
    #: This replica's id: unique per process start.
    replica_id: str

    # ------------------------------------------------------------ chunk logs

    @abstractmethod
    async def append(self, thread_id: str, chunks: Sequence[Chunk]) -> list[int]:
        """Logs `chunks` in order, after everything already logged; their offsets."""

    @abstractmethod
    async def tail(self, thread_id: str) -> LogTail: ...

    @abstractmethod
    async def read(self, thread_id: str, after: int) -> list[Chunk]:
        """Every logged chunk with an offset above `after`, oldest first."""

    @abstractmethod
    async def read_new(self, cursors: Mapping[str, int], block_ms: int) -> dict[str, list[Chunk]]:
        """Chunks logged after each thread's cursor; waits up to `block_ms` for the first."""

    @abstractmethod
    async def delete_log(self, thread_id: str) -> None:
        """Deletes the thread's log; the next append starts a new one (a new epoch)."""

    @abstractmethod
    async def interrupt_read(self) -> None:
        """Ends a `read_new` in progress at once (a thread was added to follow)."""

    # ------------------------------------------------------------ answers to retried requests

    @abstractmethod
    async def claim_answer(self, key: str, ttl_ms: int) -> bool:
        """True when nobody answered (or is answering) `key` yet: the caller answers it."""

    @abstractmethod
    async def store_answer(self, key: str, answer: Any, ttl_ms: int) -> None: ...

    @abstractmethod
    async def recall_answer(self, key: str) -> Any:
        """The stored answer; PENDING while it is being worked out; None when unknown."""

    @abstractmethod
    async def drop_answer(self, key: str) -> None:
        """Forgets a claim whose request failed, so a retry is routed afresh."""

    # ------------------------------------------------------------ runs

    @abstractmethod
    async def mark_running(self, marker: RunMarker) -> None: ...

    @abstractmethod
    async def unmark(self, thread_id: str, run_id: str) -> None:
        """Forgets the run's marker, if the thread's marker is still that run's."""

    @abstractmethod
    async def running(self, thread_id: str) -> RunMarker | None: ...

    @abstractmethod
    async def run_marker(self, run_id: str) -> RunMarker | None: ...

    @abstractmethod
    async def all_running(self) -> list[RunMarker]: ...

    # ------------------------------------------------------------ requests

    @abstractmethod
    async def serve(self, handler: Handler) -> None:
        """Starts answering requests addressed to this replica."""

    @abstractmethod
    async def request(self, replica: str, message: Any, answer_within: float) -> Any:
        """`replica`'s reply; PeerGone when it is not listening, PeerTimeout after `answer_within` seconds."""

    async def close(self) -> None:
        return None


# ------------------------------------------------------------ errors on the wire


def error_to_wire(error: AgentdError) -> dict[str, Any]:
    return {
        "status": error.status,
        "message": error.message,
        "reason": error.reason,
        "metadata": dict(error.metadata),
        "violations": [[v.field, v.description] for v in error.violations],
        "retry_after": error.retry_after,
    }


def _error_classes() -> dict[str, type[AgentdError]]:
    found: dict[str, type[AgentdError]] = {}
    for value in vars(errors_mod).values():
        if isinstance(value, type) and issubclass(value, AgentdError) and value is not AgentdError:
            found.setdefault(value.status, value)
    return found


def error_from_wire(wire: dict[str, Any]) -> AgentdError:
    """The same error the other replica raised, to raise here."""
    cls = _error_classes().get(str(wire.get("status")), errors_mod.Unavailable)
    return cls(
        str(wire.get("message", "")),
        str(wire.get("reason", "")),
        {str(k): str(v) for k, v in dict(wire.get("metadata") or {}).items()},
        [FieldViolation(str(f), str(d)) for f, d in wire.get("violations") or []],
        wire.get("retry_after"),
    )
