"""`Connection`: one gRPC channel to agentd, what every call on it carries
(credentials, metadata, a default deadline, the current span's trace
context), the service stubs, and unary calls whose failures become
`AgentdError`. `AgentdClient` adds the RPCs on top."""

# `timeout=` is the gRPC idiom: a per-call deadline (seconds), as on the unary calls.
# ruff: noqa: ASYNC109

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Self

import grpc

from agentd_proto.v1 import (
    agent_service_pb2_grpc,
    cache_service_pb2_grpc,
    signal_service_pb2_grpc,
    thread_service_pb2_grpc,
)

from ._tracing import trace_metadata
from .credentials import TLSArg, resolve_token, security
from .errors import AgentdError

__all__ = ["DEFAULT_TARGET", "Connection", "MetadataArg"]

DEFAULT_TARGET = "127.0.0.1:50051"
MetadataArg = Mapping[str, str] | Iterable[tuple[str, str]] | None


def _pairs(metadata: MetadataArg) -> list[tuple[str, str]]:
    if metadata is None:
        return []
    items = metadata.items() if isinstance(metadata, Mapping) else metadata
    return [(str(k).lower(), str(v)) for k, v in items]


_STUBS: dict[str, Any] = {
    "agents": agent_service_pb2_grpc.AgentServiceStub,
    "threads": thread_service_pb2_grpc.ThreadServiceStub,
    "signals": signal_service_pb2_grpc.SignalServiceStub,
    "cache": cache_service_pb2_grpc.CacheServiceStub,
}


class Connection:
    """The channel and what every call carries (see `AgentdClient` for the arguments)."""

    def __init__(
        self,
        target: str = DEFAULT_TARGET,
        *,
        token: str | None = None,
        tls: TLSArg = None,
        allow_insecure_token: bool = False,
        timeout: float | None = None,
        keepalive_time_ms: int | None = None,
        keepalive_timeout_ms: int | None = None,
        metadata: MetadataArg = None,
        channel_options: Sequence[tuple[str, Any]] = (),
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self.target = target
        self.tls = tls
        self.timeout = timeout
        self.metadata = _pairs(metadata)
        explicit = any(key == "authorization" for key, _ in self.metadata)
        # An authorization entry given as metadata wins over $AGENTD_TOKEN (not over token=).
        resolved = resolve_token(token) if token is not None or not explicit else None
        # A channel brought by the caller carries its own credentials: the token
        # can only ride as metadata on it.
        if channel is not None and resolved is not None:
            self._security = security(target, None, resolved, allow_insecure_token=True, metadata=dict(self.metadata))
        else:
            self._security = security(
                target, tls, resolved, allow_insecure_token=allow_insecure_token, metadata=dict(self.metadata)
            )
        options = [*self._security.options, *channel_options]
        if keepalive_time_ms is not None:
            options.append(("grpc.keepalive_time_ms", int(keepalive_time_ms)))
        if keepalive_timeout_ms is not None:
            options.append(("grpc.keepalive_timeout_ms", int(keepalive_timeout_ms)))
        self._channel_options = options
        self._channel = channel
        self._owns_channel = channel is None
        self._stubs: dict[str, Any] = {}

    @property
    def channel(self) -> grpc.aio.Channel:
        """The gRPC channel (created on first use, inside the event loop)."""
        if self._channel is None:
            credentials = self._security.credentials
            if credentials is None:
                self._channel = grpc.aio.insecure_channel(self.target, options=self._channel_options)
            else:
                self._channel = grpc.aio.secure_channel(self.target, credentials, options=self._channel_options)
        return self._channel

    def _stub(self, name: str) -> Any:
        stub = self._stubs.get(name)
        if stub is None:
            stub = self._stubs[name] = _STUBS[name](self.channel)
        return stub

    @property
    def agents_stub(self) -> agent_service_pb2_grpc.AgentServiceStub:
        return self._stub("agents")  # type: ignore[no-any-return]

    @property
    def threads_stub(self) -> thread_service_pb2_grpc.ThreadServiceStub:
        return self._stub("threads")  # type: ignore[no-any-return]

    @property
    def signals_stub(self) -> signal_service_pb2_grpc.SignalServiceStub:
        return self._stub("signals")  # type: ignore[no-any-return]

    @property
    def cache_stub(self) -> cache_service_pb2_grpc.CacheServiceStub:
        return self._stub("cache")  # type: ignore[no-any-return]

    def _metadata(self, extra: MetadataArg = None) -> list[tuple[str, str]]:
        return [*self._security.metadata, *self.metadata, *_pairs(extra), *trace_metadata()]

    async def _unary(
        self, stub: str, method: str, request: Any, timeout: float | None = None, metadata: MetadataArg = None
    ) -> Any:
        call = getattr(self._stub(stub), method)
        try:
            return await call(
                request, timeout=self.timeout if timeout is None else timeout, metadata=self._metadata(metadata)
            )
        except grpc.RpcError as err:
            raise AgentdError.from_rpc_error(err) from None

    async def close(self) -> None:
        if self._channel is not None and self._owns_channel:
            await self._channel.close(None)
        self._channel = None if self._owns_channel else self._channel
        self._stubs.clear()

    async def __aenter__(self) -> Self:
        _ = self.channel
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait until the channel is connected (raises TimeoutError)."""
        await asyncio.wait_for(self.channel.channel_ready(), timeout)
