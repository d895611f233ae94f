"""ThreadService.Connect: one stream carries everything Subscribe sends plus the
answers to the client's frames. Each frame kind has its handler; all share a
ConnectSession (the thread the `open` frame opened, the outgoing queue, the
tasks feeding it).

Frames are handled in order; a bad frame gets an error answer and the stream
goes on; half-closing ends it after the answers."""

from __future__ import annotations

import asyncio
import enum
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentd.grpc.authz import caller
from agentd.grpc.errors import to_rpc_status
from agentd.grpc.options import host_options
from agentd.grpc.routing import RouteFields, decision_to_pb, route_fields, route_request, state_signal_request
from agentd.grpc.service import Malformed, malformed_error
from agentd.grpc.signals import message_input_from_pb, signal_input_from_pb, signal_to_pb
from agentd.grpc.tenancy import scope_id, scope_resource
from agentd.grpc.threads import caller_thread, check_id, chunks_responses, hidden_signals, runs_of, snapshot_to_pb
from agentd.grpc.values import from_value, non_finite
from agentd.grpc.violations import Violations
from agentd.runtime.errors import (
    AgentdError,
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    NotFound,
    Unavailable,
)
from agentd.runtime.host import Host
from agentd.runtime.lazy import lazy
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.signals import Signal
from agentd.runtime.threads import Routing, Subscriber, follow
from agentd_proto.v1 import thread_service_pb2 as pb

if TYPE_CHECKING:
    from agentd.runtime import state_signals
else:
    state_signals = lazy("agentd.runtime.state_signals")  # the first state signal loads it

SendFrame = pb.ConnectSendMessage | pb.ConnectQueueMessage | pb.ConnectSendSignal
FRAMES = "open, send_message, queue_message, send_signal, send_state_signal, tool_result, abort"


class _Control(enum.Enum):
    END = "end"  # the stream ends with OK
    SHUTDOWN = "shutdown"  # the stream ends with UNAVAILABLE


@dataclass(frozen=True)
class Opened:
    """What the `open` frame set up (the ids scoped to the caller's tenant)."""

    agent_id: str
    resource_id: str
    thread_id: str
    subscriber: Subscriber
    #: Options of the runs this stream's sends wake.
    stream_options: ExecutionOptions | None


@dataclass
class ConnectSession:
    host: Host
    #: What a chunk batch is split under (see agentd.grpc.chunks.batch_budget).
    batch_bytes: int
    out: asyncio.Queue[pb.ConnectResponse | _Control] = field(default_factory=asyncio.Queue)
    #: A send's answer goes out before the chunks of the run it wakes.
    gate: asyncio.Lock = field(default_factory=asyncio.Lock)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    opened: Opened | None = None

    async def stream(
        self, requests: AsyncIterator[pb.ConnectRequest | Malformed]
    ) -> AsyncGenerator[pb.ConnectResponse, None]:
        self.tasks.append(asyncio.create_task(self._read(requests)))
        try:
            while True:
                item = await self.out.get()
                if item is _Control.END:
                    return
                if item is _Control.SHUTDOWN:
                    raise Unavailable("the server is shutting down; reconnect and resume", "SERVER_SHUTDOWN")
                assert isinstance(item, pb.ConnectResponse)
                yield item
        finally:
            for task in self.tasks:
                task.cancel()
            if self.opened is not None:
                self.host.threads.unsubscribe(self.opened.resource_id, self.opened.thread_id, self.opened.subscriber)

    async def _read(self, requests: AsyncIterator[pb.ConnectRequest | Malformed]) -> None:
        async for frame in requests:
            async with self.gate:
                for answer in await self.answer(frame):
                    await self.out.put(answer)
        await self.out.put(_Control.END)  # half-closed: end after the answers

    async def _pump(self, subscriber: Subscriber, hidden: frozenset[str], epoch: str, last: int) -> None:
        async for batch in follow(subscriber):
            async with self.gate:
                for chunks in runs_of(batch, hidden):
                    last = chunks[-1].offset
                    for response in chunks_responses(pb.ConnectResponse, chunks, self.batch_bytes):
                        await self.out.put(response)
        if subscriber.fell_behind:
            await self.out.put(pb.ConnectResponse(fell_behind=pb.FellBehind(last_offset=last, log_epoch=epoch)))
            await self.out.put(_Control.END)
        else:
            await self.out.put(_Control.SHUTDOWN)

    async def answer(self, frame: pb.ConnectRequest | Malformed) -> list[pb.ConnectResponse]:
        """The answers to one frame: an error answer for a bad one."""
        if isinstance(frame, Malformed):
            return [pb.ConnectResponse(error=to_rpc_status(malformed_error(frame)))]
        request_id = frame.request_id
        kind = frame.WhichOneof("frame")
        try:
            problems = non_finite(frame)
            if problems:
                raise InvalidArgument.fields(problems)
            if kind is None:
                raise InvalidArgument.field("frame", f"set one of {FRAMES}")
            if kind == "open":
                if self.opened is not None:
                    raise InvalidArgument.field("open", "the stream is already open")
                return await self._open(frame.open, request_id)
            if self.opened is None:
                raise FailedPrecondition("the first frame must be open", "STREAM_NOT_OPEN")
            answer = await _HANDLERS[kind](self, self.opened, frame)
            answer.request_id = request_id
            return [answer]
        except AgentdError as exc:
            return [pb.ConnectResponse(request_id=request_id, error=to_rpc_status(exc))]

    async def _open(self, open_: pb.ConnectOpen, request_id: str) -> list[pb.ConnectResponse]:
        v = Violations()
        v.require(open_.agent_id, "open.agent_id")
        check_id(open_.thread_id, "open.thread_id", v)
        check_id(open_.resource_id, "open.resource_id", v)
        resume = open_.resume if open_.HasField("resume") else None
        if resume is not None and not resume.log_epoch:
            v.add("open.resume.log_epoch", "is required to resume")
        hidden = hidden_signals(open_.hide_signals, "open.hide_signals", v)
        stream_options = None
        if open_.HasField("stream_options"):
            # Runs this stream wakes live on its thread.
            stream_options = host_options(self.host, open_.stream_options, "open.stream_options", v, thread_bound=True)
        v.check()
        self.host.agents.get(open_.agent_id)
        # A thread not created yet may be opened (its first run is coming); another resource's is NOT_FOUND.
        await caller_thread(self.host.storage, open_.thread_id, open_.resource_id, missing_ok=True)
        resource_id = scope_resource(open_.resource_id, "open.resource_id")
        thread_id = scope_id(open_.thread_id, "open.thread_id")
        snapshot, replay, subscriber = await self.host.threads.subscribe(
            resource_id,
            thread_id,
            resume_epoch=resume.log_epoch if resume else None,
            after_offset=resume.after_offset if resume else None,
        )
        self.opened = Opened(open_.agent_id, resource_id, thread_id, subscriber, stream_options)
        first = [pb.ConnectResponse(request_id=request_id, snapshot=snapshot_to_pb(open_, snapshot))]
        last = resume.after_offset if resume else snapshot.last_offset
        for chunks in runs_of(replay, hidden):
            last = chunks[-1].offset
            first.extend(chunks_responses(pb.ConnectResponse, chunks, self.batch_bytes))
        self.tasks.append(asyncio.create_task(self._pump(subscriber, hidden, snapshot.log_epoch, last)))
        return first


# ---------------------------------------------------------------- frames after open


async def _abort(session: ConnectSession, opened: Opened, frame: pb.ConnectRequest) -> pb.ConnectResponse:
    aborted = await session.host.threads.abort(opened.resource_id, opened.thread_id, frame.abort.run_id or None)
    return pb.ConnectResponse(abort=pb.AbortRunResponse(aborted=aborted is not None, run_id=aborted or ""))


async def _tool_result(session: ConnectSession, opened: Opened, frame: pb.ConnectRequest) -> pb.ConnectResponse:
    tr = frame.tool_result
    if not tr.run_id or not tr.tool_call_id:
        raise InvalidArgument.fields(
            [FieldViolation("tool_result.run_id", "is required")] * (not tr.run_id)
            + [FieldViolation("tool_result.tool_call_id", "is required")] * (not tr.tool_call_id)
        )
    result = from_value(tr.result) if tr.HasField("result") else None
    found = await session.host.threads.thread_of_run(tr.run_id)
    # Only a run of this stream's thread: a run id is no key to anyone else's tool calls.
    if (
        found is None
        or found[1] != opened.thread_id
        or not await session.host.threads.answer_tool(tr.run_id, tr.tool_call_id, result, tr.is_error)
    ):
        raise NotFound(
            f"no client tool call {tr.tool_call_id!r} is waiting in run {tr.run_id!r}",
            "TOOL_CALL_NOT_FOUND",
            {"run_id": tr.run_id, "tool_call_id": tr.tool_call_id},
        )
    return pb.ConnectResponse(tool_result_ack=pb.ToolResultAck(run_id=tr.run_id, tool_call_id=tr.tool_call_id))


async def _send(session: ConnectSession, opened: Opened, frame: pb.ConnectRequest) -> pb.ConnectResponse:
    """send_message, queue_message and send_signal: a signal routed into the thread."""
    v = Violations()
    kind = frame.WhichOneof("frame")
    body: SendFrame = getattr(frame, kind or "")
    fields = await _route_fields(session, opened, body, v)
    signal: Signal | None
    if isinstance(body, pb.ConnectSendSignal):
        signal = v.collect(lambda: signal_input_from_pb(body.signal, f"{kind}.signal"))
    else:
        signal = v.collect(lambda: message_input_from_pb(body.message, f"{kind}.message"))
    request = route_request(opened.agent_id, signal, fields, v, queue=isinstance(body, pb.ConnectQueueMessage))
    routing = await session.host.threads.route(request)
    return _routing_answer(routing.signal or request.signal, routing)


async def _send_state(session: ConnectSession, opened: Opened, frame: pb.ConnectRequest) -> pb.ConnectResponse:
    v = Violations()
    body = frame.send_state_signal
    fields = await _route_fields(session, opened, body, v)
    request = state_signal_request(opened.agent_id, body.state, fields, v)
    result = await state_signals.send_state_signal(request, storage=session.host.storage, threads=session.host.threads)
    return _routing_answer(result.routing.signal, result.routing)


async def _route_fields(
    session: ConnectSession, opened: Opened, body: SendFrame | pb.ConnectSendStateSignal, v: Violations
) -> RouteFields:
    """The opened thread, the frame's behaviours, the stream's options."""
    who = caller()
    return await route_fields(
        session.host,
        v,
        resource_id=who.unscoped(opened.resource_id),  # route_fields scopes what a caller names
        thread_id=who.unscoped(opened.thread_id),
        # A queued message is always a run of its own: it has no active behaviour.
        if_active=None
        if isinstance(body, pb.ConnectQueueMessage) or not body.HasField("if_active")
        else body.if_active,
        if_idle=body.if_idle if body.HasField("if_idle") else None,
        default_options=opened.stream_options,
    )


def _routing_answer(signal: Signal | None, routing: Routing) -> pb.ConnectResponse:
    return pb.ConnectResponse(
        routing=pb.ConnectRoutingAnswer(
            signal=signal_to_pb(signal) if signal is not None else None, decision=decision_to_pb(routing)
        )
    )


FrameHandler = Callable[[ConnectSession, Opened, pb.ConnectRequest], Awaitable[pb.ConnectResponse]]
_HANDLERS: dict[str, FrameHandler] = {
    "send_message": _send,
    "queue_message": _send,
    "send_signal": _send,
    "send_state_signal": _send_state,
    "tool_result": _tool_result,
    "abort": _abort,
}
