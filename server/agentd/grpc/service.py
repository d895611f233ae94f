"""Registers a servicer (a subclass of its generated servicer class) from the
service descriptor, so every method gets the same treatment: requests that do
not decode answer INVALID_ARGUMENT (not grpc's INTERNAL), a NaN or infinite
number in any Value answers INVALID_ARGUMENT naming the field, runtime errors
become rich statuses, unexpected exceptions are logged and answered INTERNAL.
A method the servicer does not implement (mypy flags the class: the generated
stubs make it abstract) answers UNIMPLEMENTED with reason NOT_IMPLEMENTED, and
is logged at start-up. With metrics on, every call's duration and status are
recorded (`rpc.server.call.duration`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import grpc
from google.protobuf import descriptor, message, message_factory

from agentd.grpc.auth import Authenticator
from agentd.grpc.authz import CALLER, ROLES
from agentd.grpc.chunks import lone_chunk
from agentd.grpc.deadlines import DefaultDeadline
from agentd.grpc.errors import Context, abort, after_first_frame
from agentd.grpc.gate import Gate
from agentd.grpc.metrics import RpcMetrics
from agentd.grpc.tenancy import unscope_message
from agentd.grpc.values import holds_values, may_hold_non_finite, non_finite
from agentd.grpc.wire import locate_malformed
from agentd.runtime.errors import (
    AgentdError,
    DeadlineExceeded,
    FieldViolation,
    InvalidArgument,
    ResourceExhausted,
    Unimplemented,
)
from agentd.runtime.identity import ANONYMOUS

log = logging.getLogger("agentd.grpc")
Unary = Callable[[Any, Context], Awaitable[Any]]
Bytes = Callable[[Any, Context], Awaitable[bytes]]
Streaming = Callable[[Any, Context], AsyncGenerator[Any, None]]
StreamingBytes = Callable[[Any, Context], AsyncIterator[bytes]]


class Malformed:
    """Stands in for a request whose bytes did not decode."""

    __slots__ = ("error", "field")

    def __init__(self, error: Exception, field: tuple[str, str] | None = None) -> None:
        self.error = error
        #: (the field path, what is wrong with it), when the bytes tell.
        self.field = field


def malformed_error(what: Malformed) -> InvalidArgument:
    violations = [FieldViolation(what.field[0], what.field[1])] if what.field else []
    return InvalidArgument(f"the request did not decode: {what.error}", "MALFORMED_REQUEST", violations=violations)


class _Refused:
    """Stands in for a decoded request that holds a NaN or infinite number."""

    __slots__ = ("error",)

    def __init__(self, error: InvalidArgument) -> None:
        self.error = error


def _deserializer(
    cls: type[message.Message], *, walk: bool = False
) -> Callable[[bytes], message.Message | Malformed | _Refused]:
    """Decodes a request; `walk` (the type can hold a Value): a request
    holding a NaN or infinite number decodes to the error refusing it (looked
    for where the bytes tell there may be one), answered once its caller is
    admitted. A bidirectional stream checks its own frames."""
    from_string = cls.FromString

    def decode(data: bytes) -> message.Message | Malformed | _Refused:
        try:
            request = from_string(data)
        except Exception as exc:
            return Malformed(exc, locate_malformed(cls.DESCRIPTOR, data))
        if walk and may_hold_non_finite(data):
            problems = non_finite(request)
            if problems:
                return _Refused(InvalidArgument.fields(problems))
        return request

    return decode


#: What a request that is not to be handled decodes to (see `_deserializer`).
_REFUSED = (Malformed, _Refused)


def _refusal(request: Malformed | _Refused) -> InvalidArgument:
    """Why a decoded request is not handled: every decoded request is looked
    at before it is (a bidirectional stream's frames are its own to check)."""
    return malformed_error(request) if isinstance(request, Malformed) else request.error


async def _guard(context: Context, exc: BaseException) -> NoReturn:
    if isinstance(exc, AgentdError):
        await abort(context, exc)
    log.exception("unhandled error in %s", context, exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")


def _too_large(method: str, size: int, limit: int) -> ResourceExhausted:
    instead = "stream the run with Stream" if method == "Generate" else "ask for less (a smaller page_size)"
    return ResourceExhausted(
        f"the reply would be {size} bytes, over the server's limit of {limit} ([server] max_message_bytes, "
        f"which most clients also receive at most): {instead}",
        "RESPONSE_TOO_LARGE",
        {"reply_bytes": str(size), "limit_bytes": str(limit)},
    )


def _stream_too_large(response: message.Message, size: int, limit: int) -> ResourceExhausted:
    metadata = {"reply_bytes": str(size), "limit_bytes": str(limit)}
    chunk = lone_chunk(response)
    what = "the message"
    if chunk is not None:
        # Which chunk, so a subscriber can resume after its offset instead of
        # meeting it again at every replay.
        what = f"chunk {chunk.seq} of run {chunk.run_id} (offset {chunk.offset})"
        metadata.update(run_id=chunk.run_id, chunk_seq=str(chunk.seq), chunk_offset=str(chunk.offset))
    return ResourceExhausted(
        f"the stream's next message would be {size} bytes, over the server's limit of {limit} "
        f"([server] max_message_bytes, which most clients also receive at most): {what} is that large "
        "(a finish repeats the whole reply); every message before it was sent",
        "RESPONSE_TOO_LARGE",
        metadata,
    )


@dataclass(frozen=True)
class CallPolicy:
    """What every served call gets: its caller admitted by `gate`, a unary
    reply bounded by `max_reply_bytes`, `default_deadline` when it carries none,
    and its duration in `rpc_metrics` when metrics are on."""

    gate: Gate = field(default_factory=lambda: Gate(Authenticator()))
    max_reply_bytes: int | None = None
    default_deadline: float | None = None
    rpc_metrics: RpcMetrics | None = None


class _Call:
    """The method a wrapper serves, and what of the server's policy it needs
    on every call, read off once when the method is registered."""

    __slots__ = ("deadline", "full_name", "gate", "max_reply_bytes", "metrics", "name", "open")

    def __init__(self, full_name: str, policy: CallPolicy) -> None:
        self.full_name = full_name  # "<package.Service>/<Method>"
        self.name = full_name.rpartition("/")[2]
        self.gate = policy.gate
        #: No caller to tell apart and no limit to apply: every call is ANONYMOUS's, unawaited.
        self.open = policy.gate.admits_everyone
        self.max_reply_bytes = policy.max_reply_bytes
        seconds = policy.default_deadline
        self.deadline = DefaultDeadline(seconds) if seconds is not None else None
        self.metrics = policy.rpc_metrics

    def timed(self, context: Context, metrics: RpcMetrics) -> _Timing:
        """Times the call until grpc is done with it (asked only when metrics are on)."""
        timing = _Timing(self.full_name, metrics)
        context.add_done_callback(timing.done)  # type: ignore[arg-type]  # grpc-stubs wants a class with __call__
        return timing


class _Timing:
    """One call's duration, recorded when grpc is done with the call: a stream
    cancelled while it waits to write (a client that stopped reading) never
    gets back into its handler, so the handler cannot be the one to record."""

    __slots__ = ("answered", "method", "metrics", "started")

    def __init__(self, method: str, metrics: RpcMetrics) -> None:
        self.method = method
        self.metrics = metrics
        self.started = time.perf_counter()
        #: The handler returned (or its stream ended) on its own.
        self.answered = False

    def done(self, context: Context) -> None:
        code = context.code() or (grpc.StatusCode.OK if self.answered else _cancelled(context))
        self.metrics.record(self.method, code, time.perf_counter() - self.started)


def _cancelled(context: Context) -> grpc.StatusCode:
    """What a call that ended under its handler ended with."""
    remaining = context.time_remaining()
    expired = remaining is not None and remaining <= 0
    return grpc.StatusCode.DEADLINE_EXCEEDED if expired else grpc.StatusCode.CANCELLED


def _unary(impl: Unary, call: _Call) -> Bytes:
    """The handler answers the reply's bytes (registered with no serializer):
    serialised once, its size is the size checked against max_reply_bytes."""
    limit = call.max_reply_bytes
    deadline = call.deadline
    metrics = call.metrics

    async def handle(request: Any, context: Context) -> bytes:
        timing = None if metrics is None else call.timed(context, metrics)
        try:
            identity = ANONYMOUS if call.open else await call.gate.admit(call.full_name, context)
            if isinstance(request, _REFUSED):
                raise _refusal(request)
            # Already the caller (every call to a server that admits everyone): nothing to set.
            token = None if CALLER.get() is identity else CALLER.set(identity)
            try:
                if deadline is None or context.time_remaining() is not None:
                    response = await impl(request, context)
                else:  # a unary call that carries no deadline gets the server's default one
                    expiry = deadline.start()
                    try:
                        response = await impl(request, context)
                    except asyncio.CancelledError:
                        if deadline.end(expiry):
                            raise _past_default_deadline(call.name, deadline.seconds) from None
                        raise
                    finally:
                        deadline.end(expiry)
            finally:
                if token is not None:
                    CALLER.reset(token)
            unscope_message(response, identity.tenant)
            reply: bytes = response.SerializeToString()
            if limit is not None and len(reply) > limit:
                raise _too_large(call.name, len(reply), limit)
            if timing is not None:
                timing.answered = True
            return reply
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as exc:
            await _guard(context, exc)

    return handle


def _past_default_deadline(method: str, seconds: float) -> DeadlineExceeded:
    return DeadlineExceeded(
        f"{method} took longer than the server's {seconds:g} s for a call without a "
        "deadline ([server] default_deadline_seconds): set a deadline of your own",
        "DEFAULT_DEADLINE_EXCEEDED",
    )


def _stream(impl: Streaming, call: _Call, *, decoded_request: bool) -> StreamingBytes:
    """Server streaming (`decoded_request`: one request to check) or bidirectional
    (frames are the implementation's to check). The handler answers each
    message's bytes (registered with no serializer), so a message over
    max_reply_bytes ends the call with RESPONSE_TOO_LARGE, not a transport error."""
    limit = call.max_reply_bytes
    metrics = call.metrics

    async def handle(request: Any, context: Context) -> AsyncIterator[bytes]:
        timing = None if metrics is None else call.timed(context, metrics)
        try:
            try:
                identity = ANONYMOUS if call.open else await call.gate.admit(call.full_name, context)
            except Exception:
                if not decoded_request:
                    await after_first_frame(request)
                raise
            if decoded_request and isinstance(request, _REFUSED):
                raise _refusal(request)
            token = None if CALLER.get() is identity else CALLER.set(identity)
            try:
                # Closed here, not by the collector, when a message is too large: its cleanup runs now.
                with call.gate.stream(identity):
                    async with contextlib.aclosing(impl(request, context)) as responses:
                        async for response in responses:
                            unscope_message(response, identity.tenant)
                            data: bytes = response.SerializeToString()
                            if limit is not None and len(data) > limit:
                                raise _stream_too_large(response, len(data), limit)
                            yield data
                if timing is not None:
                    timing.answered = True
            finally:
                # grpc may close an abandoned stream from another context, where
                # there is nothing of ours to restore.
                if token is not None:
                    with contextlib.suppress(ValueError):
                        CALLER.reset(token)
        except (grpc.aio.AbortError, asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            await _guard(context, exc)

    return handle


def _missing(service: str, method: str, *, streaming: bool) -> Unary | Streaming:
    err = Unimplemented(
        f"{service}.{method} is not implemented in this release of agentd",
        "NOT_IMPLEMENTED",
        {"method": f"{service}.{method}"},
    )

    async def unary(_: Any, __: Context) -> Any:
        raise err

    async def stream(_: Any, __: Context) -> AsyncGenerator[Any, None]:
        raise err
        yield  # pragma: no cover

    return stream if streaming else unary


def register(
    server: grpc.aio.Server,
    service: descriptor.ServiceDescriptor,
    base: type,
    servicer: object,
    policy: CallPolicy | None = None,
) -> None:
    """Serves `service` with `servicer`, an instance of `base`, the service's
    generated servicer class (TypeError otherwise), under `policy`. A unary
    reply over its `max_reply_bytes` is RESOURCE_EXHAUSTED RESPONSE_TOO_LARGE instead."""
    if not isinstance(servicer, base):
        raise TypeError(f"{type(servicer).__name__} does not subclass {base.__name__}, the {service.name} servicer")
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    policy = policy or CallPolicy()
    for method in service.methods:
        full_name = f"{service.full_name}/{method.name}"
        if full_name not in ROLES:
            raise RuntimeError(f"{full_name} has no role in agentd.grpc.authz.ROLES: decide who may call it")
        call = _Call(full_name, policy)
        if method.client_streaming and not method.server_streaming:
            raise NotImplementedError("client-streaming methods are not part of the contract")
        decode = _deserializer(
            message_factory.GetMessageClass(method.input_type),
            walk=not method.client_streaming and holds_values(method.input_type),
        )
        impl: Any = getattr(servicer, method.name)
        if getattr(type(servicer), method.name) is getattr(base, method.name):  # the generated stand-in
            log.warning("%s.%s is not implemented: it answers UNIMPLEMENTED", service.name, method.name)
            impl = _missing(service.name, method.name, streaming=method.server_streaming)
        if method.client_streaming:
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _stream(impl, call, decoded_request=False), request_deserializer=decode
            )
        elif method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                _stream(impl, call, decoded_request=True), request_deserializer=decode
            )
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(_unary(impl, call), request_deserializer=decode)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
