"""Server reflection under both of its names: `grpc.reflection.v1` (what buf
curl, grpcurl and most newer tools ask first) and `grpc.reflection.v1alpha`
(what older ones ask, and all grpcio-reflection implements).

v1 is v1alpha renamed: the same messages, field for field, so one servicer
answers both and v1alpha's generated classes read and write v1's bytes. A
second copy of the servicer and of its generated code would say nothing new."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

__all__ = ["SERVICE_NAMES", "add_reflection"]

V1 = "grpc.reflection.v1.ServerReflection"
V1ALPHA: str = reflection.SERVICE_NAME
#: Both reflection services, as they are listed.
SERVICE_NAMES = (V1, V1ALPHA)


def add_reflection(server: grpc.aio.Server, services: Iterable[str]) -> None:
    """Serves reflection for `services` (reflection's own added) under both
    names, as generic handlers only (see server.GenericOnly for why)."""
    servicer: Any = reflection.aio.ReflectionServicer((*services, *SERVICE_NAMES))  # type: ignore[attr-defined]  # in __all__
    method = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        tuple(grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": method}) for name in SERVICE_NAMES)
    )
