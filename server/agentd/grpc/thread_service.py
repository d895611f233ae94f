"""ThreadService: threads and their messages (subscriptions arrive with signals)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

from agentd.grpc import convert, paging, tracing
from agentd.grpc.errors import Context, to_rpc_status
from agentd.grpc.validate import Violations, execution_options, page_size, timestamp
from agentd.runtime.chunks import Chunk, SignalEcho
from agentd.runtime.errors import (
    AgentdError,
    AlreadyExists,
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    NotFound,
    Unavailable,
)
from agentd.runtime.host import Host
from agentd.runtime.messages import new_id, utcnow
from agentd.runtime.storage import MessageQuery, Order, StorageError, Thread, ThreadExists
from agentd.runtime.threads import Subscriber, follow
from agentd_proto.v1 import thread_service_pb2 as pb

log = logging.getLogger("agentd.threads")
MAX_ID_LENGTH = 256
UPDATABLE = ("title", "metadata")


def thread_to_pb(thread: Thread) -> pb.Thread:
    return pb.Thread(
        id=thread.id,
        resource_id=thread.resource_id,
        title=thread.title,
        metadata=convert.to_struct(thread.metadata),
        create_time=convert.to_timestamp(thread.created_at),
        update_time=convert.to_timestamp(thread.updated_at),
    )


def thread_not_found(thread_id: str) -> NotFound:
    return NotFound(f"thread {thread_id!r} not found", "THREAD_NOT_FOUND", {"thread_id": thread_id})


def storage_unavailable(exc: StorageError) -> AgentdError:
    return Unavailable(f"the storage backend failed: {exc}", "STORAGE_UNAVAILABLE")


def _id(value: str, field: str, v: Violations, *, required: bool = True) -> None:
    if not value:
        if required:
            v.add(field, "is required")
    elif len(value) > MAX_ID_LENGTH:
        v.add(field, f"must be at most {MAX_ID_LENGTH} characters")


class ThreadService:
    def __init__(self, host: Host) -> None:
        self.host = host

    async def _thread(self, thread_id: str, resource_id: str) -> Thread:
        """The thread, or NOT_FOUND (also when it belongs to another resource:
        a caller learns nothing about threads it does not own)."""
        try:
            thread = await self.host.storage.get_thread(thread_id)
        except StorageError as exc:
            raise storage_unavailable(exc) from exc
        if thread is None or (resource_id and thread.resource_id != resource_id):
            raise thread_not_found(thread_id)
        return thread

    async def CreateThread(self, request: pb.CreateThreadRequest, context: Context) -> Any:
        t = request.thread
        v = Violations()
        _id(t.resource_id, "thread.resource_id", v)
        _id(t.id, "thread.id", v, required=False)
        v.check()
        now = utcnow()
        thread = Thread(
            id=t.id or new_id("thr_"),
            resource_id=t.resource_id,
            title=t.title,
            metadata=convert.from_struct(t.metadata) if t.HasField("metadata") else {},
            created_at=now,
            updated_at=now,
        )
        try:
            created = await self.host.storage.create_thread(thread)
        except ThreadExists:
            raise AlreadyExists(
                f"thread {thread.id!r} already exists", "THREAD_ALREADY_EXISTS", {"thread_id": thread.id}
            ) from None
        except StorageError as exc:
            raise storage_unavailable(exc) from exc
        return pb.CreateThreadResponse(thread=thread_to_pb(created))

    async def GetThread(self, request: pb.GetThreadRequest, context: Context) -> Any:
        v = Violations()
        _id(request.thread_id, "thread_id", v)
        v.check()
        thread = await self._thread(request.thread_id, request.resource_id)
        active = await self.host.threads.active_run_id(thread.resource_id, thread.id)
        return pb.GetThreadResponse(thread=thread_to_pb(thread), active_run_id=active or "")

    async def ListThreads(self, request: pb.ListThreadsRequest, context: Context) -> Any:
        v = Violations()
        _id(request.resource_id, "resource_id", v)
        size = page_size(request.page_size, "page_size", v)
        cursor = paging.decode("threads:" + request.resource_id, request.page_token)
        v.check()
        metadata = convert.from_struct(request.metadata_filter) if request.HasField("metadata_filter") else None
        try:
            page = await self.host.storage.list_threads(
                request.resource_id, limit=size, cursor=cursor, metadata=metadata
            )
        except StorageError as exc:
            raise storage_unavailable(exc) from exc
        except ValueError:  # a forged token that decoded but holds no cursor
            raise InvalidArgument.field("page_token", "is not a page token this list issued") from None
        token = paging.encode("threads:" + request.resource_id, page.next_cursor) if page.next_cursor else ""
        return pb.ListThreadsResponse(threads=[thread_to_pb(t) for t in page.threads], next_page_token=token)

    async def UpdateThread(self, request: pb.UpdateThreadRequest, context: Context) -> Any:
        v = Violations()
        _id(request.thread.id, "thread.id", v)
        paths = list(request.update_mask.paths) or list(UPDATABLE)
        for i, path in enumerate(request.update_mask.paths):
            if path not in UPDATABLE:
                v.add(f"update_mask.paths[{i}]", f"{path!r} cannot be updated (updatable: title, metadata)")
        v.check()
        await self._thread(request.thread.id, request.thread.resource_id)
        t = request.thread
        try:
            updated = await self.host.storage.update_thread(
                t.id,
                title=t.title if "title" in paths else None,
                metadata=convert.from_struct(t.metadata) if "metadata" in paths else None,
            )
        except StorageError as exc:
            raise storage_unavailable(exc) from exc
        if updated is None:  # deleted meanwhile
            raise thread_not_found(t.id)
        return pb.UpdateThreadResponse(thread=thread_to_pb(updated))

    async def DeleteThread(self, request: pb.DeleteThreadRequest, context: Context) -> Any:
        v = Violations()
        _id(request.thread_id, "thread_id", v)
        v.check()
        await self._thread(request.thread_id, request.resource_id)
        try:
            if not await self.host.storage.delete_thread(request.thread_id):
                raise thread_not_found(request.thread_id)
        except StorageError as exc:
            raise storage_unavailable(exc) from exc
        return pb.DeleteThreadResponse()

    async def ListMessages(self, request: pb.ListMessagesRequest, context: Context) -> Any:
        v = Violations()
        _id(request.thread_id, "thread_id", v)
        size = page_size(request.page_size, "page_size", v)
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
        await self._thread(request.thread_id, request.resource_id)
        query = MessageQuery(
            request.thread_id,
            limit=size,
            order=order,
            cursor=cursor,
            start=start,
            end=end,
            include_system_reminders=request.include_system_reminders,
        )
        try:
            page = await self.host.storage.list_messages(query)
        except StorageError as exc:
            raise storage_unavailable(exc) from exc
        except ValueError:
            raise InvalidArgument.field("page_token", "is not a page token this list issued") from None
        token = paging.encode(kind, page.next_cursor) if page.next_cursor else ""
        return pb.ListMessagesResponse(
            messages=[convert.message_to_pb(m) for m in page.messages], next_page_token=token
        )

    # ------------------------------------------------------------ live threads

    async def AbortRun(self, request: pb.AbortRunRequest, context: Context) -> Any:
        v = Violations()
        _id(request.thread_id, "thread_id", v)
        v.check()
        aborted = await self.host.threads.abort(request.resource_id, request.thread_id, request.run_id or None)
        return pb.AbortRunResponse(aborted=aborted is not None, run_id=aborted or "")

    async def Subscribe(self, request: pb.SubscribeRequest, context: Context) -> AsyncIterator[pb.SubscribeResponse]:
        v = Violations()
        _id(request.thread_id, "thread_id", v)
        resume = request.resume if request.HasField("resume") else None
        if resume is not None and not resume.log_epoch:
            v.add("resume.log_epoch", "is required to resume (the epoch of the snapshot you last saw)")
        hidden = _hidden(request.hide_signals, "hide_signals", v)
        v.check()
        threads = self.host.threads
        snapshot, replay, subscriber = await threads.subscribe(
            request.resource_id,
            request.thread_id,
            resume_epoch=resume.log_epoch if resume else None,
            after_offset=resume.after_offset if resume else None,
        )
        last = resume.after_offset if resume else snapshot.last_offset
        try:
            yield pb.SubscribeResponse(snapshot=snapshot_to_pb(request, snapshot))
            for chunks in _runs_of(replay, hidden):
                last = chunks[-1].offset
                yield pb.SubscribeResponse(chunks=pb.ChunkBatch(chunks=convert.chunks_to_pb(chunks)))
            async for batch in follow(subscriber):
                for chunks in _runs_of(batch, hidden):
                    last = chunks[-1].offset
                    yield pb.SubscribeResponse(chunks=pb.ChunkBatch(chunks=convert.chunks_to_pb(chunks)))
            if subscriber.fell_behind:
                yield pb.SubscribeResponse(fell_behind=pb.FellBehind(last_offset=last, log_epoch=snapshot.log_epoch))
                return
            raise Unavailable("the server is shutting down; reconnect and resume", "SERVER_SHUTDOWN")
        finally:
            threads.unsubscribe(request.resource_id, request.thread_id, subscriber)

    async def Connect(self, requests: AsyncIterator[Any], context: Context) -> AsyncIterator[pb.ConnectResponse]:
        """Everything Subscribe sends, plus answers to the client's frames on the
        same stream. Frames are handled in order; a bad frame gets an error
        answer and the stream goes on; half-closing ends it after the answers."""
        from agentd.grpc.signal_service import SignalRouter

        if self.host.runs.telemetry.tracer is not None:
            tracing.link_runs_to_caller(context.invocation_metadata())
        out: asyncio.Queue[pb.ConnectResponse | str] = asyncio.Queue()
        gate = asyncio.Lock()  # a send's answer goes out before the chunks of the run it wakes
        router = SignalRouter(self.host)
        session: dict[str, Any] = {}
        tasks: list[asyncio.Task[None]] = []

        async def pump(subscriber: Subscriber, hidden: frozenset[str], epoch: str, last: int) -> None:
            async for batch in follow(subscriber):
                async with gate:
                    for chunks in _runs_of(batch, hidden):
                        last = chunks[-1].offset
                        await out.put(pb.ConnectResponse(chunks=pb.ChunkBatch(chunks=convert.chunks_to_pb(chunks))))
            if subscriber.fell_behind:
                await out.put(pb.ConnectResponse(fell_behind=pb.FellBehind(last_offset=last, log_epoch=epoch)))
                await out.put(_END)
            else:
                await out.put(_SHUTDOWN)

        async def read() -> None:
            async for frame in requests:
                async with gate:
                    for answer in await self._frame(frame, session, router, pump, tasks):
                        await out.put(answer)
            await out.put(_END)  # half-closed: end after the answers

        tasks.append(asyncio.create_task(read()))
        try:
            while True:
                item = await out.get()
                if item == _END:
                    return
                if item == _SHUTDOWN:
                    raise Unavailable("the server is shutting down; reconnect and resume", "SERVER_SHUTDOWN")
                assert isinstance(item, pb.ConnectResponse)
                yield item
        finally:
            for task in tasks:
                task.cancel()
            if "subscriber" in session:
                self.host.threads.unsubscribe(session["resource_id"], session["thread_id"], session["subscriber"])

    async def _frame(
        self, frame: Any, session: dict[str, Any], router: Any, pump: Any, tasks: list[Any]
    ) -> list[pb.ConnectResponse]:
        from agentd.grpc.convert_signals import message_input_from_pb, signal_input_from_pb, signal_to_pb
        from agentd.grpc.service import Malformed, malformed_error
        from agentd.grpc.signal_service import decision_to_pb

        if isinstance(frame, Malformed):
            return [pb.ConnectResponse(error=to_rpc_status(malformed_error(frame)))]
        request_id = frame.request_id
        kind = frame.WhichOneof("frame")
        try:
            if kind is None:
                raise InvalidArgument.field(
                    "frame",
                    "set one of open, send_message, queue_message, send_signal, send_state_signal, tool_result, abort",
                )
            if kind == "open":
                if "subscriber" in session:
                    raise InvalidArgument.field("open", "the stream is already open")
                return await self._open(frame.open, session, pump, tasks, request_id)
            if "subscriber" not in session:
                raise FailedPrecondition("the first frame must be open", "STREAM_NOT_OPEN")
            resource_id, thread_id, agent_id = session["resource_id"], session["thread_id"], session["agent_id"]
            v = Violations()
            if kind == "abort":
                aborted = await self.host.threads.abort(resource_id, thread_id, frame.abort.run_id or None)
                return [
                    pb.ConnectResponse(
                        request_id=request_id,
                        abort=pb.AbortRunResponse(aborted=aborted is not None, run_id=aborted or ""),
                    )
                ]
            if kind == "tool_result":
                tr = frame.tool_result
                if not tr.run_id or not tr.tool_call_id:
                    raise InvalidArgument.fields(
                        [FieldViolation("tool_result.run_id", "is required")] * (not tr.run_id)
                        + [FieldViolation("tool_result.tool_call_id", "is required")] * (not tr.tool_call_id)
                    )
                result = convert.from_value(tr.result) if tr.HasField("result") else None
                if not await self.host.threads.answer_tool(tr.run_id, tr.tool_call_id, result, tr.is_error):
                    raise NotFound(
                        f"no client tool call {tr.tool_call_id!r} is waiting in run {tr.run_id!r}",
                        "TOOL_CALL_NOT_FOUND",
                        {"run_id": tr.run_id, "tool_call_id": tr.tool_call_id},
                    )
                return [
                    pb.ConnectResponse(
                        request_id=request_id,
                        tool_result_ack=pb.ToolResultAck(run_id=tr.run_id, tool_call_id=tr.tool_call_id),
                    )
                ]
            body = getattr(frame, kind)
            delivery = await router.delivery(
                v,
                resource_id=resource_id,
                thread_id=thread_id,
                if_active=body.if_active if kind != "queue_message" and body.HasField("if_active") else None,
                if_idle=body.if_idle if body.HasField("if_idle") else None,
                default_options=session.get("stream_options"),
            )
            if kind == "send_state_signal":
                signal, routing, _ = await router.state_signal(agent_id, body.state, delivery, v)
            else:
                try:
                    signal = (
                        signal_input_from_pb(body.signal, f"{kind}.signal")
                        if kind == "send_signal"
                        else message_input_from_pb(body.message, f"{kind}.message")
                    )
                except InvalidArgument as exc:
                    for violation in exc.violations:
                        v.add(violation.field, violation.description, exc.reason)
                    signal = None
                v.check()
                routing = await router.route(agent_id, signal, delivery, queue=kind == "queue_message")
                signal = routing.signal or signal
            return [
                pb.ConnectResponse(
                    request_id=request_id,
                    routing=pb.ConnectRoutingAnswer(
                        signal=signal_to_pb(signal) if signal is not None else None, decision=decision_to_pb(routing)
                    ),
                )
            ]
        except AgentdError as exc:
            return [pb.ConnectResponse(request_id=request_id, error=to_rpc_status(exc))]

    async def _open(
        self, open_: Any, session: dict[str, Any], pump: Any, tasks: list[Any], request_id: str
    ) -> list[pb.ConnectResponse]:
        v = Violations()
        v.require(open_.agent_id, "open.agent_id")
        _id(open_.thread_id, "open.thread_id", v)
        _id(open_.resource_id, "open.resource_id", v)
        resume = open_.resume if open_.HasField("resume") else None
        if resume is not None and not resume.log_epoch:
            v.add("open.resume.log_epoch", "is required to resume")
        hidden = _hidden(open_.hide_signals, "open.hide_signals", v)
        stream_options = None
        if open_.HasField("stream_options"):
            stream_options = execution_options(
                open_.stream_options,
                "open.stream_options",
                v,
                self.host.processors,
                self.host.step_functions,
                thread_bound=True,  # runs this stream wakes live on its thread
            )
        v.check()
        self.host.agents.get(open_.agent_id)
        snapshot, replay, subscriber = await self.host.threads.subscribe(
            open_.resource_id,
            open_.thread_id,
            resume_epoch=resume.log_epoch if resume else None,
            after_offset=resume.after_offset if resume else None,
        )
        session.update(
            resource_id=open_.resource_id,
            thread_id=open_.thread_id,
            agent_id=open_.agent_id,
            subscriber=subscriber,
            stream_options=stream_options,
        )
        first = [pb.ConnectResponse(request_id=request_id, snapshot=snapshot_to_pb(open_, snapshot))]
        last = resume.after_offset if resume else snapshot.last_offset
        for chunks in _runs_of(replay, hidden):
            last = chunks[-1].offset
            first.append(pb.ConnectResponse(chunks=pb.ChunkBatch(chunks=convert.chunks_to_pb(chunks))))
        tasks.append(asyncio.create_task(pump(subscriber, hidden, snapshot.log_epoch, last)))
        return first


_END, _SHUTDOWN = "end", "shutdown"
SIGNAL_CATEGORIES = {"user", "state", "reactive", "notification", "user-message", "system-reminder"}


def _hidden(names: Any, field: str, v: Violations) -> frozenset[str]:
    out = set()
    for i, name in enumerate(names):
        if name not in SIGNAL_CATEGORIES:
            v.add(f"{field}[{i}]", f"{name!r} is not a signal type")
        out.add({"user-message": "user", "system-reminder": "reactive"}.get(name, name))
    return frozenset(out)


def _runs_of(chunks: list[Chunk], hidden: frozenset[str]) -> Iterator[list[Chunk]]:
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


def snapshot_to_pb(request: Any, snapshot: Any) -> pb.ThreadSnapshot:
    return pb.ThreadSnapshot(
        thread_id=request.thread_id,
        resource_id=request.resource_id,
        active_run_id=snapshot.active_run_id,
        log_epoch=snapshot.log_epoch,
        last_offset=snapshot.last_offset,
    )
