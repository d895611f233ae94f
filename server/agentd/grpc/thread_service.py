"""ThreadService: threads and their messages, live subscriptions, and the
Connect stream (its frames: connect.py)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING

from agentd.grpc import paging, tracing
from agentd.grpc.authz import caller, check_id_chars
from agentd.grpc.chunks import MAX_BATCH_BYTES
from agentd.grpc.errors import Context
from agentd.grpc.messages import message_to_pb
from agentd.grpc.service import Malformed
from agentd.grpc.tenancy import scope_id, scope_resource
from agentd.grpc.threads import (
    caller_thread,
    check_id,
    chunks_responses,
    hidden_signals,
    require_id,
    runs_of,
    snapshot_to_pb,
    storage_errors,
    thread_not_found,
    thread_to_pb,
)
from agentd.grpc.values import from_struct, timestamp
from agentd.grpc.violations import Violations
from agentd.runtime.errors import AlreadyExists, InvalidArgument, PermissionDenied, Unavailable
from agentd.runtime.host import Host
from agentd.runtime.identity import tenant_of
from agentd.runtime.lazy import lazy
from agentd.runtime.messages import new_id, utcnow
from agentd.runtime.storage import MessageQuery, Order, Thread, ThreadExists
from agentd.runtime.threads import follow
from agentd_proto.v1 import thread_service_pb2 as pb
from agentd_proto.v1 import thread_service_pb2_grpc

if TYPE_CHECKING:
    from agentd.grpc import connect
else:
    connect = lazy("agentd.grpc.connect")  # the first Connect stream loads its frames

log = logging.getLogger("agentd.threads")
UPDATABLE = ("title", "metadata")


def _bad_page_token() -> InvalidArgument:
    return InvalidArgument.field("page_token", "is not a page token this list issued")


class ThreadService(thread_service_pb2_grpc.ThreadServiceServicer):
    def __init__(self, host: Host, batch_bytes: int = MAX_BATCH_BYTES) -> None:
        self.host = host
        #: What a Subscribe or Connect chunk batch is split under (see agentd.grpc.chunks.batch_budget).
        self.batch_bytes = batch_bytes

    async def _thread(self, thread_id: str, resource_id: str, *, missing_ok: bool = False) -> Thread | None:
        return await caller_thread(self.host.storage, thread_id, resource_id, missing_ok=missing_ok)

    async def _existing(self, thread_id: str, resource_id: str) -> Thread:
        thread = await self._thread(thread_id, resource_id)
        assert thread is not None
        return thread

    async def CreateThread(self, request: pb.CreateThreadRequest, context: Context) -> pb.CreateThreadResponse:
        t = request.thread
        v = Violations()
        check_id(t.resource_id, "thread.resource_id", v)
        check_id(t.id, "thread.id", v, required=False)
        v.check()
        now = utcnow()
        thread = Thread(
            id=scope_id(t.id or new_id("thr_"), "thread.id"),
            resource_id=scope_resource(t.resource_id, "thread.resource_id"),
            title=t.title,
            metadata=from_struct(t.metadata) if t.HasField("metadata") else {},
            created_at=now,
            updated_at=now,
        )
        try:
            with storage_errors():
                created = await self.host.storage.create_thread(thread)
        except ThreadExists:
            raise AlreadyExists(
                f"thread {t.id!r} already exists", "THREAD_ALREADY_EXISTS", {"thread_id": t.id}
            ) from None
        return pb.CreateThreadResponse(thread=thread_to_pb(created))

    async def GetThread(self, request: pb.GetThreadRequest, context: Context) -> pb.GetThreadResponse:
        require_id(request.thread_id, "thread_id")
        thread = await self._existing(request.thread_id, request.resource_id)
        active = await self.host.threads.active_run_id(thread.resource_id, thread.id)
        return pb.GetThreadResponse(thread=thread_to_pb(thread), active_run_id=active or "")

    async def ListThreads(self, request: pb.ListThreadsRequest, context: Context) -> pb.ListThreadsResponse:
        v = Violations()
        check_id(request.resource_id, "resource_id", v)
        size = paging.page_size(request.page_size, "page_size", v)
        cursor = paging.decode("threads:" + request.resource_id, request.page_token)
        v.check()
        who = caller()
        if not request.resource_id and not (who.has("admin") and who.all_resources):
            raise PermissionDenied(
                "listing threads across resources needs the admin role for every resource; name a resource_id",
                "ROLE_REQUIRED",
                {"required_role": "admin"},
            )
        resource = scope_resource(request.resource_id, "resource_id")
        metadata = from_struct(request.metadata_filter) if request.HasField("metadata_filter") else None
        try:
            with storage_errors():
                page = await self.host.storage.list_threads(resource, limit=size, cursor=cursor, metadata=metadata)
        except ValueError:  # a forged token that decoded but holds no cursor
            raise _bad_page_token() from None
        token = paging.encode("threads:" + request.resource_id, page.next_cursor) if page.next_cursor else ""
        mine = [t for t in page.threads if tenant_of(t.id) == who.tenant]  # across resources: the tenant's only
        return pb.ListThreadsResponse(threads=[thread_to_pb(t) for t in mine], next_page_token=token)

    async def UpdateThread(self, request: pb.UpdateThreadRequest, context: Context) -> pb.UpdateThreadResponse:
        v = Violations()
        check_id(request.thread.id, "thread.id", v)
        paths = list(request.update_mask.paths) or list(UPDATABLE)
        for i, path in enumerate(request.update_mask.paths):
            if path not in UPDATABLE:
                v.add(f"update_mask.paths[{i}]", f"{path!r} cannot be updated (updatable: title, metadata)")
        v.check()
        thread = await self._existing(request.thread.id, request.thread.resource_id)
        t = request.thread
        with storage_errors():
            updated = await self.host.storage.update_thread(
                thread.id,
                title=t.title if "title" in paths else None,
                metadata=from_struct(t.metadata) if "metadata" in paths else None,
            )
        if updated is None:  # deleted meanwhile
            raise thread_not_found(t.id)
        return pb.UpdateThreadResponse(thread=thread_to_pb(updated))

    async def DeleteThread(self, request: pb.DeleteThreadRequest, context: Context) -> pb.DeleteThreadResponse:
        require_id(request.thread_id, "thread_id")
        thread = await self._existing(request.thread_id, request.resource_id)
        if not await self.host.threads.delete_thread(thread.resource_id, thread.id):
            raise thread_not_found(request.thread_id)
        return pb.DeleteThreadResponse()

    async def ListMessages(self, request: pb.ListMessagesRequest, context: Context) -> pb.ListMessagesResponse:
        v = Violations()
        check_id(request.thread_id, "thread_id", v)
        size = paging.page_size(request.page_size, "page_size", v)
        order: Order = "desc" if request.order == pb.SORT_ORDER_DESCENDING else "asc"
        if request.order not in (pb.SORT_ORDER_UNSPECIFIED, pb.SORT_ORDER_ASCENDING, pb.SORT_ORDER_DESCENDING):
            v.add("order", "unknown sort order")
        # The token is bound to the thread and the filters it was issued for.
        kind = f"messages:{request.thread_id}:{order}:{request.include_system_reminders}"
        cursor = paging.decode(kind, request.page_token)
        start = timestamp(request.start_time, "start_time", v) if request.HasField("start_time") else None
        end = timestamp(request.end_time, "end_time", v) if request.HasField("end_time") else None
        if start and end and start > end:
            v.add("end_time", "must not be before start_time")
        v.check()
        thread = await self._existing(request.thread_id, request.resource_id)
        query = MessageQuery(
            thread.id,
            limit=size,
            order=order,
            cursor=cursor,
            start=start,
            end=end,
            include_system_reminders=request.include_system_reminders,
        )
        try:
            with storage_errors():
                page = await self.host.storage.list_messages(query)
        except ValueError:
            raise _bad_page_token() from None
        token = paging.encode(kind, page.next_cursor) if page.next_cursor else ""
        return pb.ListMessagesResponse(messages=[message_to_pb(m) for m in page.messages], next_page_token=token)

    # ------------------------------------------------------------ live threads

    async def AbortRun(self, request: pb.AbortRunRequest, context: Context) -> pb.AbortRunResponse:
        check_id_chars(request.run_id, "run_id")
        if not request.thread_id and request.run_id:
            # A run without a thread (Generate or Stream without memory): by its id, for whoever started it.
            who = caller()
            aborted_here = self.host.runs.abort_unbound(request.run_id, (who.tenant, who.subject))
            return pb.AbortRunResponse(aborted=aborted_here, run_id=request.run_id if aborted_here else "")
        require_id(request.thread_id, "thread_id")
        thread = await self._thread(request.thread_id, request.resource_id, missing_ok=True)
        resource = thread.resource_id if thread else scope_resource(request.resource_id, "resource_id")
        aborted = await self.host.threads.abort(
            resource, scope_id(request.thread_id, "thread_id"), request.run_id or None
        )
        return pb.AbortRunResponse(aborted=aborted is not None, run_id=aborted or "")

    async def Subscribe(self, request: pb.SubscribeRequest, context: Context) -> AsyncIterator[pb.SubscribeResponse]:
        v = Violations()
        check_id(request.thread_id, "thread_id", v)
        resume = request.resume if request.HasField("resume") else None
        if resume is not None and not resume.log_epoch:
            v.add("resume.log_epoch", "is required to resume (the epoch of the snapshot you last saw)")
        hidden = hidden_signals(request.hide_signals, "hide_signals", v)
        v.check()
        # A thread not created yet may be watched (its first run is coming); another resource's is NOT_FOUND.
        await self._thread(request.thread_id, request.resource_id, missing_ok=True)
        resource, thread_id = (
            scope_resource(request.resource_id, "resource_id"),
            scope_id(request.thread_id, "thread_id"),
        )
        threads = self.host.threads
        snapshot, replay, subscriber = await threads.subscribe(
            resource,
            thread_id,
            resume_epoch=resume.log_epoch if resume else None,
            after_offset=resume.after_offset if resume else None,
        )
        last = resume.after_offset if resume else snapshot.last_offset
        try:
            yield pb.SubscribeResponse(snapshot=snapshot_to_pb(request, snapshot))
            for chunks in runs_of(replay, hidden):
                last = chunks[-1].offset
                for response in chunks_responses(pb.SubscribeResponse, chunks, self.batch_bytes):
                    yield response
            async for batch in follow(subscriber):
                for chunks in runs_of(batch, hidden):
                    last = chunks[-1].offset
                    for response in chunks_responses(pb.SubscribeResponse, chunks, self.batch_bytes):
                        yield response
            if subscriber.fell_behind:
                yield pb.SubscribeResponse(fell_behind=pb.FellBehind(last_offset=last, log_epoch=snapshot.log_epoch))
                return
            raise Unavailable("the server is shutting down; reconnect and resume", "SERVER_SHUTDOWN")
        finally:
            threads.unsubscribe(resource, thread_id, subscriber)

    async def Connect(
        self, request_iterator: AsyncIterator[pb.ConnectRequest | Malformed], context: Context
    ) -> AsyncIterator[pb.ConnectResponse]:
        """Everything Subscribe sends, plus answers to the client's frames on the
        same stream (see connect.py)."""
        if self.host.runs.telemetry.tracer is not None:
            tracing.link_runs_to_caller(context.invocation_metadata())
        async with aclosing(connect.ConnectSession(self.host, self.batch_bytes).stream(request_iterator)) as responses:
            async for response in responses:
                yield response
