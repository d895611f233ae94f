"""`ConnectSession`: the bidirectional thread stream (`ThreadService.Connect`)
with client tools answered by local handler functions."""

# `timeout=` is the gRPC idiom: a per-call deadline (seconds), as on the unary calls.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import uuid
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from agentd_proto.v1 import (
    chunk_pb2,
    message_pb2,
    options_pb2,
    signal_pb2,
    thread_service_pb2,
    thread_service_pb2_grpc,
)

from ._values import from_value, to_value
from .errors import AgentdError
from .options import client_tool
from .signals import (
    IfActiveArg,
    IfIdleArg,
    if_active_pb,
    if_idle_pb,
    message_input,
    signal_input,
    state_signal_input,
)
from .streams import cancel_call
from .types import Attributes, Routing, chunk_kind

log = logging.getLogger("agentd_client")

ToolHandler = Callable[..., Any]
"""`handler(args)` or `handler(args, call)`: `args` is the tool call's JSON
arguments as Python data, `call` the `ToolCall` message. Returns (or, when
async, resolves to) the JSON result. An exception is sent as an error result
(`is_error=True`) the model sees."""


@dataclass(frozen=True)
class ClientTool:
    """A client tool: its handler plus what the model is told about it."""

    handler: ToolHandler
    description: str = ""
    input_schema: Mapping[str, Any] | None = None

    def declaration(self, name: str) -> options_pb2.ClientTool:
        return client_tool({"name": name, "description": self.description, "input_schema": self.input_schema})


def _takes_call(handler: ToolHandler) -> bool:
    try:
        params = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


@dataclass
class _Pending:
    frame: thread_service_pb2.ConnectRequest
    future: asyncio.Future[thread_service_pb2.ConnectResponse]
    generation: int = -1
    resent: bool = False


_END = object()
_EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]


@dataclass
class _State:
    generation: int = 0
    received: int = 0
    epoch: str | None = None
    handled: set[tuple[str, str]] = field(default_factory=set)


class ConnectSession:
    """One agent's live session on a thread.

        async with client.connect("tools", thread_id, resource_id, tools={"pick_color": pick}) as session:
            routing = await session.send_message("choose a color")
            chunks = await session.read_run(routing.run_id)

    `await client.connect(...)` opens it too (close it with `await session.close()`).
    The session reads the stream in the background: chunks queue up for
    `async for chunk in session` (or `read_run`), and a `tool_call` chunk with
    `client_tool=True` for a registered tool runs its handler and sends the
    `tool_result` frame, whether or not anyone iterates. Every send answers
    the server's routing decision (`Routing`); a bad frame raises
    `AgentdError` and the session goes on.

    With `reconnect=True` a fell-behind marker or `UNAVAILABLE` reopens the
    stream with a resume point after the last chunk received, and frames
    still unanswered are sent again (their message and signal ids are fixed
    client-side, so a retried send is not routed twice). With
    `reconnect=False` the chunks end at a fell-behind marker (kept in
    `fell_behind`); open a new session with `after=session.position`.
    """

    def __init__(
        self,
        stub: thread_service_pb2_grpc.ThreadServiceStub,
        agent_id: str,
        thread_id: str,
        resource_id: str,
        *,
        tools: Mapping[str, ToolHandler | ClientTool] | None,
        stream_options: options_pb2.ExecutionOptions | None,
        hide_signals: Sequence[str],
        after: tuple[str, int] | None,
        reconnect: bool,
        metadata: Callable[[], list[tuple[str, str]]],
        max_reconnect_attempts: int = 8,
        backoff: tuple[float, float] = (0.1, 5.0),
    ) -> None:
        self._stub = stub
        self.agent_id = agent_id
        self.thread_id = thread_id
        self.resource_id = resource_id
        self.tools: dict[str, ClientTool] = {
            name: spec if isinstance(spec, ClientTool) else ClientTool(spec) for name, spec in (tools or {}).items()
        }
        self._takes_call = {name: _takes_call(spec.handler) for name, spec in self.tools.items()}
        self.stream_options = self._with_tools(stream_options)
        self.hide_signals = list(hide_signals)
        self.reconnect = reconnect
        self._metadata = metadata
        self.max_reconnect_attempts = max_reconnect_attempts
        self._backoff = backoff
        self._state = _State()
        if after is not None:
            self._state.epoch, self._state.received = after[0], int(after[1])
        self._ids = itertools.count(1)
        self._prefix = uuid.uuid4().hex[:8]
        self._call: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()
        self._open_lock = asyncio.Lock()
        self._pending: dict[str, _Pending] = {}
        self._inbox: asyncio.Queue[Any] = asyncio.Queue()
        self._buffer: list[chunk_pb2.Chunk] = []
        self._tool_tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        self._dead: BaseException | None = None
        self._ended = False
        self.snapshot: thread_service_pb2.ThreadSnapshot | None = None
        self.fell_behind: thread_service_pb2.FellBehind | None = None
        self.reconnects = 0
        #: Errors of client tool handlers' answers that could not be sent.
        self.tool_errors: list[BaseException] = []

    # ---------------------------------------------------------------- opening

    def _with_tools(self, options: options_pb2.ExecutionOptions | None) -> options_pb2.ExecutionOptions | None:
        """`options` plus the session's client tools (those it does not declare itself)."""
        return self._add_tools(options) if self.tools else options

    def _add_tools(self, options: options_pb2.ExecutionOptions | None) -> options_pb2.ExecutionOptions:
        out = options_pb2.ExecutionOptions()
        if options is not None:
            out.CopyFrom(options)
        declared = {t.name for t in out.client_tools}
        out.client_tools.extend(spec.declaration(n) for n, spec in self.tools.items() if n not in declared)
        return out

    @property
    def position(self) -> tuple[str, int] | None:
        """`(log_epoch, offset)` of the last chunk received (or of the snapshot)."""
        return (self._state.epoch, self._state.received) if self._state.epoch is not None else None

    def _next_id(self) -> str:
        return f"{self._prefix}-{next(self._ids)}"

    async def _start_call(self) -> None:
        """A new Connect call, opened (with a resume point once there is one);
        retries UNAVAILABLE when reconnecting is on."""
        attempt = 0
        while True:
            if self._call is not None:
                self._call.cancel()
            # No request iterator: frames are written on the call (grpc.aio; the stubs require one).
            self._call = self._stub.Connect(metadata=tuple(self._metadata()))  # type: ignore[call-arg]
            opening = thread_service_pb2.ConnectOpen(
                agent_id=self.agent_id,
                resource_id=self.resource_id,
                thread_id=self.thread_id,
                hide_signals=self.hide_signals,
            )
            if self.stream_options is not None:
                opening.stream_options.CopyFrom(self.stream_options)
            if self._state.epoch is not None:
                opening.resume.CopyFrom(
                    thread_service_pb2.ResumePoint(log_epoch=self._state.epoch, after_offset=self._state.received)
                )
            try:
                try:
                    await self._call.write(thread_service_pb2.ConnectRequest(request_id=self._next_id(), open=opening))
                except asyncio.InvalidStateError:
                    pass  # the server ended the call first (a refusal): reading it raises why
                first = await self._call.read()
            except asyncio.CancelledError:
                cancel_call(self._call)
                raise
            except grpc.RpcError as err:
                error = AgentdError.from_rpc_error(err)
                if not self.reconnect or error.code is not grpc.StatusCode.UNAVAILABLE:
                    raise error from None
                if attempt >= self.max_reconnect_attempts:
                    raise error from None
                await asyncio.sleep(min(self._backoff[1], self._backoff[0] * 2**attempt))
                attempt += 1
                continue
            if first is _EOF:
                raise AgentdError(grpc.StatusCode.UNAVAILABLE, "the thread stream ended before its snapshot")
            if first.WhichOneof("event") == "error":
                self._call.cancel()
                raise AgentdError.from_status(first.error)
            if first.WhichOneof("event") != "snapshot":
                raise AgentdError(grpc.StatusCode.INTERNAL, "the thread stream did not start with a snapshot")
            self.snapshot = first.snapshot
            if self._state.epoch is None:
                self._state.epoch, self._state.received = first.snapshot.log_epoch, first.snapshot.last_offset
            return

    async def open(self) -> thread_service_pb2.ThreadSnapshot:
        """Open the stream (idempotent) and return the snapshot."""
        async with self._open_lock:
            if self._reader is None:
                await self._start_call()
                self._reader = asyncio.create_task(self._read_loop())
        assert self.snapshot is not None
        return self.snapshot

    def __await__(self) -> Generator[Any, None, ConnectSession]:
        async def opened() -> ConnectSession:
            await self.open()
            return self

        return opened().__await__()

    async def __aenter__(self) -> ConnectSession:
        await self.open()
        return self

    async def __aexit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            await self.close()
        else:
            await self.aclose()

    # ---------------------------------------------------------------- reading

    async def _reopen(self) -> None:
        """Resume on a new call, then send what is still unanswered. When that
        call ends before they are all out, the rest wait for the next one: the
        read loop reads why it ended (and resumes again when it may)."""
        async with self._write_lock:
            self._state.generation += 1
            self.reconnects += 1
            await self._start_call()
            for entry in list(self._pending.values()):
                if entry.future.done():
                    continue
                try:
                    await self._call.write(entry.frame)
                except (asyncio.InvalidStateError, grpc.RpcError):  # (grpc.aio's two ways to say the call ended)
                    return
                entry.generation, entry.resent = self._state.generation, True

    async def _read_loop(self) -> None:
        attempt = 0
        try:
            while True:
                try:
                    response = await self._call.read()
                except grpc.RpcError as err:
                    error = AgentdError.from_rpc_error(err)
                    retry = self.reconnect and not self._closing and error.code is grpc.StatusCode.UNAVAILABLE
                    if not retry or attempt >= self.max_reconnect_attempts:
                        raise error from None
                    await asyncio.sleep(min(self._backoff[1], self._backoff[0] * 2**attempt))
                    attempt += 1
                    await self._reopen()
                    continue
                if response is _EOF:
                    if not self._closing:
                        raise AgentdError(grpc.StatusCode.UNAVAILABLE, "the thread stream ended")
                    return
                attempt = 0
                await self._dispatch(response)
                if response.WhichOneof("event") == "fell_behind":
                    if not self.reconnect:  # the stream ends; resume with a new session (after=position)
                        self.fell_behind = response.fell_behind
                        return
                    await self._reopen()
        except asyncio.CancelledError:
            self._finish(None if self._closing else AgentdError(grpc.StatusCode.CANCELLED, "the session was cancelled"))
            raise
        except BaseException as exc:  # a dead stream fails whatever waits on it
            self._finish(exc)
        else:
            self._finish(None)

    def _finish(self, error: BaseException | None) -> None:
        ended = "the session fell behind and ended" if self.fell_behind is not None else "the session is closed"
        self._dead = error or AgentdError(grpc.StatusCode.CANCELLED, ended)
        for entry in self._pending.values():
            if not entry.future.done():
                entry.future.set_exception(self._dead)
        self._inbox.put_nowait(error if error is not None else _END)

    async def _dispatch(self, response: thread_service_pb2.ConnectResponse) -> None:
        event = response.WhichOneof("event")
        if event == "chunks":
            batch = [c for c in response.chunks.chunks if not c.offset or c.offset > self._state.received]
            if not batch:
                return
            self._state.received = max([self._state.received, *(c.offset for c in batch)])
            self._inbox.put_nowait(batch)
            for chunk in batch:
                if chunk.HasField("tool_call") and chunk.tool_call.client_tool:
                    self._maybe_answer(chunk)
        elif event == "snapshot":
            self.snapshot = response.snapshot
        elif response.request_id:
            entry = self._pending.get(response.request_id)
            if entry is not None and not entry.future.done():
                entry.future.set_result(response)

    def _maybe_answer(self, chunk: chunk_pb2.Chunk) -> None:
        call = chunk.tool_call
        key = (chunk.run_id, call.tool_call_id)
        if call.tool_name not in self.tools or key in self._state.handled:
            return
        self._state.handled.add(key)
        task = asyncio.create_task(self._answer(chunk.run_id, call))
        self._tool_tasks.add(task)
        task.add_done_callback(self._tool_tasks.discard)

    async def _answer(self, run_id: str, call: message_pb2.ToolCall) -> None:
        spec = self.tools[call.tool_name]
        args = from_value(call.args) if call.HasField("args") else None
        try:
            result = spec.handler(args, call) if self._takes_call[call.tool_name] else spec.handler(args)
            if inspect.isawaitable(result):
                result = await result
            is_error = False
        except Exception as exc:
            log.warning("client tool %s failed: %s", call.tool_name, exc)
            result, is_error = f"{type(exc).__name__}: {exc}", True
        try:
            await self.send_tool_result(run_id, call.tool_call_id, result, is_error=is_error)
        except Exception as exc:
            log.warning("client tool %s: the result was not accepted: %s", call.tool_name, exc)
            self.tool_errors.append(exc)

    # ---------------------------------------------------------------- chunks

    def __aiter__(self) -> ConnectSession:
        return self

    async def __anext__(self) -> chunk_pb2.Chunk:
        while not self._buffer:
            if self._ended:
                raise StopAsyncIteration
            item = await self._inbox.get()
            if item is _END:
                self._ended = True
                raise StopAsyncIteration
            if isinstance(item, BaseException):
                self._ended = True
                raise item
            self._buffer = list(item)
        return self._buffer.pop(0)

    async def read_run(self, run_id: str | None = None, *, timeout: float | None = None) -> list[chunk_pb2.Chunk]:
        """Read chunks until run `run_id` (or, when None, the next top-level
        run) ends with finish, error or abort; returns every chunk read."""

        async def read() -> list[chunk_pb2.Chunk]:
            out = []
            async for chunk in self:
                out.append(chunk)
                mine = chunk.run_id == run_id if run_id else not chunk.parent_run_id
                if mine and chunk_kind(chunk) in ("finish", "error", "abort"):
                    return out
            raise AgentdError(grpc.StatusCode.UNAVAILABLE, "the thread stream ended before the run did")

        return await asyncio.wait_for(read(), timeout)

    # ---------------------------------------------------------------- frames

    async def _send(self, timeout: float | None = None, **frame: Any) -> thread_service_pb2.ConnectResponse:
        await self.open()
        if self._dead is not None:
            raise self._dead
        request_id = self._next_id()
        loop = asyncio.get_running_loop()
        entry = _Pending(thread_service_pb2.ConnectRequest(request_id=request_id, **frame), loop.create_future())
        self._pending[request_id] = entry
        try:
            async with self._write_lock:
                if entry.generation != self._state.generation and not entry.future.done():
                    try:
                        await self._call.write(entry.frame)
                        entry.generation = self._state.generation
                    except Exception as exc:  # the call broke: the reader reopens and resends
                        if not self.reconnect:
                            message = f"the thread stream is closed: {exc}"
                            raise AgentdError(grpc.StatusCode.UNAVAILABLE, message) from None
            response = await asyncio.wait_for(asyncio.shield(entry.future), timeout)
        finally:
            self._pending.pop(request_id, None)
        if response.WhichOneof("event") == "error":
            error = AgentdError.from_status(response.error)
            if entry.resent and "tool_result" in frame and error.reason == "TOOL_CALL_NOT_FOUND":
                return response  # answered before the stream was resumed
            raise error
        return response

    def _routing(self, response: thread_service_pb2.ConnectResponse) -> Routing:
        routing = response.routing
        return Routing.of(routing.signal if routing.HasField("signal") else None, routing.decision)

    def _idle(self, if_idle: IfIdleArg, idle_attributes: Attributes, options: Any) -> signal_pb2.IfIdle | None:
        idle = if_idle_pb(if_idle, idle_attributes, options)
        if idle is not None and idle.HasField("stream_options") and self.tools:
            idle.stream_options.CopyFrom(self._add_tools(idle.stream_options))
        return idle

    async def send_message(
        self,
        text: str = "",
        *,
        parts: Iterable[Any] | None = None,
        message_id: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        if_active: IfActiveArg = None,
        if_idle: IfIdleArg = None,
        active_attributes: Attributes = None,
        idle_attributes: Attributes = None,
        stream_options: Any = None,
        timeout: float | None = None,
    ) -> Routing:
        """Send a user message: delivered into the active run, or wakes the thread."""
        frame = thread_service_pb2.ConnectSendMessage(
            message=message_input(text, parts, message_id or uuid.uuid4().hex, attributes, metadata, provider_options)
        )
        active = if_active_pb(if_active, active_attributes)
        if active is not None:
            frame.if_active.CopyFrom(active)
        idle = self._idle(if_idle, idle_attributes, stream_options)
        if idle is not None:
            frame.if_idle.CopyFrom(idle)
        return self._routing(await self._send(timeout, send_message=frame))

    async def queue_message(
        self,
        text: str = "",
        *,
        parts: Iterable[Any] | None = None,
        message_id: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        if_idle: IfIdleArg = None,
        idle_attributes: Attributes = None,
        stream_options: Any = None,
        timeout: float | None = None,
    ) -> Routing:
        """Queue a user message for the thread's next turn."""
        frame = thread_service_pb2.ConnectQueueMessage(
            message=message_input(text, parts, message_id or uuid.uuid4().hex, attributes, metadata, provider_options)
        )
        idle = self._idle(if_idle, idle_attributes, stream_options)
        if idle is not None:
            frame.if_idle.CopyFrom(idle)
        return self._routing(await self._send(timeout, queue_message=frame))

    async def send_signal(
        self,
        type: str = "user",
        text: str = "",
        *,
        parts: Iterable[Any] | None = None,
        signal_id: str = "",
        tag_name: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        transient: bool | None = None,
        if_active: IfActiveArg = None,
        if_idle: IfIdleArg = None,
        active_attributes: Attributes = None,
        idle_attributes: Attributes = None,
        stream_options: Any = None,
        timeout: float | None = None,
    ) -> Routing:
        """Send a signal of any type ("user", "state", "reactive", "notification")."""
        frame = thread_service_pb2.ConnectSendSignal(
            signal=signal_input(
                type,
                text,
                parts,
                signal_id or uuid.uuid4().hex,
                tag_name,
                attributes,
                metadata,
                provider_options,
                transient,
            )
        )
        active = if_active_pb(if_active, active_attributes)
        if active is not None:
            frame.if_active.CopyFrom(active)
        idle = self._idle(if_idle, idle_attributes, stream_options)
        if idle is not None:
            frame.if_idle.CopyFrom(idle)
        return self._routing(await self._send(timeout, send_signal=frame))

    async def send_state_signal(
        self,
        lane: str,
        text: str = "",
        *,
        value: Any = None,
        delta: Any = None,
        mode: str | int = "snapshot",
        cache_key: str = "",
        parts: Iterable[Any] | None = None,
        signal_id: str = "",
        tag_name: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        if_active: IfActiveArg = None,
        if_idle: IfIdleArg = None,
        active_attributes: Attributes = None,
        idle_attributes: Attributes = None,
        stream_options: Any = None,
        timeout: float | None = None,
    ) -> Routing:
        """Send named thread state on `lane`; skipped ("skipped_unchanged") when unchanged."""
        frame = thread_service_pb2.ConnectSendStateSignal(
            state=state_signal_input(
                lane,
                text,
                value=value,
                delta=delta,
                mode=mode,
                cache_key=cache_key,
                parts=parts,
                signal_id=signal_id or uuid.uuid4().hex,
                tag_name=tag_name,
                attributes=attributes,
                metadata=metadata,
                provider_options=provider_options,
            )
        )
        active = if_active_pb(if_active, active_attributes)
        if active is not None:
            frame.if_active.CopyFrom(active)
        idle = self._idle(if_idle, idle_attributes, stream_options)
        if idle is not None:
            frame.if_idle.CopyFrom(idle)
        return self._routing(await self._send(timeout, send_state_signal=frame))

    async def send_tool_result(
        self, run_id: str, tool_call_id: str, result: Any, *, is_error: bool = False, timeout: float | None = None
    ) -> None:
        """Answer a client tool call yourself (for tools without a handler)."""
        frame = thread_service_pb2.ConnectToolResult(
            run_id=run_id, tool_call_id=tool_call_id, result=to_value(result), is_error=is_error
        )
        await self._send(timeout, tool_result=frame)

    async def abort(self, run_id: str = "", *, timeout: float | None = None) -> str | None:
        """Abort the thread's active run (only `run_id` when given). Returns
        the aborted run's id, or None when no run was aborted."""
        response = await self._send(timeout, abort=thread_service_pb2.ConnectAbort(run_id=run_id))
        return response.abort.run_id if response.abort.aborted else None

    # ---------------------------------------------------------------- closing

    async def close(self, timeout: float = 10.0) -> None:
        """Finish running tool handlers, half-close (never aborts a run) and
        wait for the server to end the stream."""
        if self._reader is None:
            return
        if self._tool_tasks:
            await asyncio.wait(set(self._tool_tasks), timeout=timeout)
        self._closing = True
        if self._dead is None:
            try:
                async with self._write_lock:
                    await self._call.done_writing()
                await asyncio.wait_for(asyncio.shield(self._reader), timeout)
            except (Exception, TimeoutError):
                pass
        await self.aclose()

    async def aclose(self) -> None:
        """End the stream now (never aborts a run)."""
        self._closing = True
        for task in list(self._tool_tasks):
            task.cancel()
        if self._call is not None:
            self._call.cancel()
        if self._reader is not None and not self._reader.done():
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass
