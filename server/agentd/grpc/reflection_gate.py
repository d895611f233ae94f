"""`[server] reflection = "authenticated"`: server reflection only for a
caller who authenticates (any role); health stays open."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from agentd.grpc.auth import Authenticator
from agentd.grpc.errors import Context, abort, after_first_frame
from agentd.runtime.errors import AgentdError

__all__ = ["ReflectionGate"]

_REFLECTION = "/grpc.reflection."


class ReflectionGate(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]  # generic only in the stubs
    def __init__(self, authenticator: Authenticator) -> None:
        self.authenticator = authenticator

    async def intercept_service(  # type: ignore[override]  # grpc returns None for an unknown method
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        method = method.decode() if isinstance(method, bytes) else method
        if handler is None or not method.startswith(_REFLECTION) or handler.stream_stream is None:
            return handler
        inner: Any = handler.stream_stream  # grpc-stubs types it as the sync servicer's
        authenticator = self.authenticator

        async def guarded(requests: AsyncIterator[Any], context: Context) -> AsyncIterator[Any]:
            try:
                metadata = {k: v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}
                peer = {k: list(v) for k, v in context.auth_context().items()}
                authenticator.authenticate(metadata, peer)
            except AgentdError as exc:
                await after_first_frame(requests)
                await abort(context, exc)
            async for response in inner(requests, context):
                yield response

        return grpc.stream_stream_rpc_method_handler(
            guarded,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
