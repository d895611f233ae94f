"""Registers servicers from the service descriptors, so every method gets the
same treatment: requests that do not decode answer INVALID_ARGUMENT (not
grpc's INTERNAL), runtime errors become rich statuses, unexpected exceptions
are logged and answered INTERNAL, and methods with no implementation yet
answer UNIMPLEMENTED with reason NOT_IMPLEMENTED."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import descriptor, message, message_factory

from agentd.grpc.errors import Context, abort
from agentd.runtime.errors import AgentdError, InvalidArgument, Unimplemented

log = logging.getLogger("agentd.grpc")


class Malformed:
    """Stands in for a request whose bytes did not decode."""

    __slots__ = ("error",)

    def __init__(self, error: Exception) -> None:
        self.error = error


def malformed_error(what: Malformed) -> InvalidArgument:
    return InvalidArgument(f"the request did not decode: {what.error}", "MALFORMED_REQUEST")


def _deserializer(cls: type[message.Message]) -> Callable[[bytes], Any]:
    def decode(data: bytes) -> Any:
        try:
            return cls.FromString(data)
        except Exception as exc:
            return Malformed(exc)

    return decode


async def _guard(context: Context, exc: BaseException) -> None:
    if isinstance(exc, AgentdError):
        await abort(context, exc)
    log.exception("unhandled error in %s", context, exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, f"internal error: {type(exc).__name__}")


def _unary(impl: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def handle(request: Any, context: Context) -> Any:
        try:
            if isinstance(request, Malformed):
                raise malformed_error(request)
            return await impl(request, context)
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as exc:
            await _guard(context, exc)

    return handle


def _stream(impl: Callable[..., AsyncIterator[Any]], *, decoded_request: bool) -> Callable[..., AsyncIterator[Any]]:
    """Server streaming (`decoded_request`: one request to check) or bidirectional
    (frames are the implementation's to check)."""

    async def handle(request: Any, context: Context) -> AsyncIterator[Any]:
        try:
            if decoded_request and isinstance(request, Malformed):
                raise malformed_error(request)
            async for response in impl(request, context):
                yield response
        except (grpc.aio.AbortError, asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            await _guard(context, exc)

    return handle


def _not_implemented(service: str, method: str) -> Unimplemented:
    return Unimplemented(
        f"{service}.{method} is not implemented in this release of agentd",
        "NOT_IMPLEMENTED",
        {"method": f"{service}.{method}"},
    )


def register(server: grpc.aio.Server, service: descriptor.ServiceDescriptor, servicer: object) -> None:
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in service.methods:
        request_cls = message_factory.GetMessageClass(method.input_type)
        response_cls = message_factory.GetMessageClass(method.output_type)
        impl = getattr(servicer, method.name, None)
        err = _not_implemented(service.name, method.name)
        decode = _deserializer(request_cls)
        encode = response_cls.SerializeToString
        if method.client_streaming and method.server_streaming:

            async def bidi_missing(_: Any, __: Any, err: AgentdError = err) -> AsyncIterator[Any]:
                raise err
                yield  # pragma: no cover

            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _stream(impl or bidi_missing, decoded_request=False),
                request_deserializer=decode,
                response_serializer=encode,
            )
        elif method.server_streaming:

            async def stream_missing(_: Any, __: Any, err: AgentdError = err) -> AsyncIterator[Any]:
                raise err
                yield  # pragma: no cover

            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                _stream(impl or stream_missing, decoded_request=True),
                request_deserializer=decode,
                response_serializer=encode,
            )
        elif method.client_streaming:
            raise NotImplementedError("client-streaming methods are not part of the contract")
        else:

            async def unary_missing(_: Any, __: Any, err: AgentdError = err) -> Any:
                raise err

            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                _unary(impl or unary_missing), request_deserializer=decode, response_serializer=encode
            )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))
