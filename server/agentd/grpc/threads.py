"""Threads on the wire, shared by ThreadService and its Connect stream:
threads and snapshots to protobuf, id checks, the signal types a subscriber
hides, chunk batches per run, and storage failures as UNAVAILABLE."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TypeVar

from agentd.grpc.authz import caller
from agentd.grpc.chunks import add_chunks, sized
from agentd.grpc.errors import unavailable_on
from agentd.grpc.tenancy import scope_id, scope_resource
from agentd.grpc.values import to_struct, to_timestamp
from agentd.grpc.violations import Violations
from agentd.runtime.chunks import Chunk, SignalEcho
from agentd.runtime.errors import NotFound
from agentd.runtime.storage import Storage, StorageError, Thread
from agentd.runtime.threads import Snapshot
from agentd_proto.v1 import thread_service_pb2 as pb

MAX_ID_LENGTH = 256
SIGNAL_CATEGORIES = {"user", "state", "reactive", "notification", "user-message", "system-reminder"}


def thread_to_pb(thread: Thread) -> pb.Thread:
    return pb.Thread(
        id=thread.id,
        resource_id=thread.resource_id,
        title=thread.title,
        metadata=to_struct(thread.metadata),
        create_time=to_timestamp(thread.created_at),
        update_time=to_timestamp(thread.updated_at),
    )


def snapshot_to_pb(request: pb.SubscribeRequest | pb.ConnectOpen, snapshot: Snapshot) -> pb.ThreadSnapshot:
    return pb.ThreadSnapshot(
        thread_id=request.thread_id,
        resource_id=request.resource_id,
        active_run_id=snapshot.active_run_id,
        log_epoch=snapshot.log_epoch,
        last_offset=snapshot.last_offset,
    )


def thread_not_found(thread_id: str) -> NotFound:
    return NotFound(f"thread {thread_id!r} not found", "THREAD_NOT_FOUND", {"thread_id": thread_id})


def storage_errors() -> AbstractContextManager[None]:
    return unavailable_on(StorageError, "storage", "STORAGE_UNAVAILABLE")


async def caller_thread(
    storage: Storage, thread_id: str, resource_id: str, *, missing_ok: bool = False
) -> Thread | None:
    """The thread the caller names (its ids scoped to the caller's tenant),
    or NOT_FOUND: also when it belongs to another resource, or to one the
    caller may not act for (a caller learns nothing of threads it does not
    own). `missing_ok`: None for a thread not created yet."""
    who = caller()
    scoped_thread, scoped_resource = scope_id(thread_id, "thread_id"), scope_resource(resource_id, "resource_id")
    with storage_errors():
        thread = await storage.get_thread(scoped_thread)
    if thread is None:
        if missing_ok:
            return None
        raise thread_not_found(thread_id)
    if scoped_resource and thread.resource_id != scoped_resource:
        raise thread_not_found(thread_id)
    if not who.may_act_for(who.unscoped(thread.resource_id)):
        raise thread_not_found(thread_id)
    return thread


def check_id(value: str, field: str, v: Violations, *, required: bool = True) -> None:
    if not value:
        if required:
            v.add(field, "is required")
    elif len(value) > MAX_ID_LENGTH:
        v.add(field, f"must be at most {MAX_ID_LENGTH} characters")


def require_id(value: str, field: str) -> None:
    """`check_id` of a request's only field: INVALID_ARGUMENT at once."""
    v = Violations()
    check_id(value, field, v)
    v.check()


def hidden_signals(names: Sequence[str], field: str, v: Violations) -> frozenset[str]:
    """The signal categories a subscriber hides (legacy names mapped)."""
    out = set()
    for i, name in enumerate(names):
        if name not in SIGNAL_CATEGORIES:
            v.add(f"{field}[{i}]", f"{name!r} is not a signal type")
        out.add({"user-message": "user", "system-reminder": "reactive"}.get(name, name))
    return frozenset(out)


Carrying = TypeVar("Carrying", pb.SubscribeResponse, pb.ConnectResponse)


def chunks_responses(kind: type[Carrying], chunks: list[Chunk], budget: int) -> list[Carrying]:
    """Subscribe or Connect responses carrying one run's chunks (built in place,
    not copied in), as many as keep each under `budget` bytes."""

    def build(part: Sequence[Chunk]) -> Carrying:
        response = kind()
        add_chunks(response.chunks.chunks, part)
        return response

    return sized(build, chunks, budget)


def runs_of(chunks: list[Chunk], hidden: frozenset[str]) -> Iterator[list[Chunk]]:
    """Consecutive chunks of one run (a batch never mixes runs), minus the signal
    echoes this subscriber hides."""
    group: list[Chunk] = []
    for chunk in chunks:
        if hidden and isinstance(chunk.payload, SignalEcho) and chunk.payload.signal.type in hidden:
            continue
        if group and group[-1].run_id != chunk.run_id:
            yield group
            group = []
        group.append(chunk)
    if group:
        yield group
