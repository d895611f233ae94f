"""Property-based: requests built from the descriptors, for every RPC of the
four services, never get UNKNOWN or INTERNAL, and the server stays SERVING."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from google.protobuf import descriptor as d
from google.protobuf import message, message_factory
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentd.grpc.server import SERVICES
from support.server import Running, start_server

METHODS = [(s, m) for s in SERVICES for m in s.methods]
FORBIDDEN = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
# Strings that mean something to the server, mixed with noise.
WORDS = st.sampled_from(["", "echo", "scripted", "x", "agentd.resourceId", "data-x", "processor:a", "ü\x00"])
TEXT = st.one_of(WORDS, st.text(max_size=12))
# NaN and infinities too: a Value can carry them, JSON cannot (INVALID_ARGUMENT, never INTERNAL).
JSON_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from([float("nan"), float("inf"), -float("inf")]), TEXT
)


def json_values(depth: int = 2) -> st.SearchStrategy[Any]:
    if depth == 0:
        return JSON_SCALAR
    return st.one_of(
        JSON_SCALAR,
        st.lists(json_values(depth - 1), max_size=3),
        st.dictionaries(TEXT, json_values(depth - 1), max_size=3),
    )


def field_value(f: d.FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    t = f.type
    if t == d.FieldDescriptor.TYPE_MESSAGE:
        return messages(f.message_type, depth + 1)
    if t == d.FieldDescriptor.TYPE_ENUM:
        return st.sampled_from([v.number for v in f.enum_type.values] + [99])
    if t == d.FieldDescriptor.TYPE_STRING:
        return TEXT
    if t == d.FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=8)
    if t == d.FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if t in (d.FieldDescriptor.TYPE_DOUBLE, d.FieldDescriptor.TYPE_FLOAT):
        return st.floats(-1e6, 1e6, allow_nan=False)
    if t in (
        d.FieldDescriptor.TYPE_UINT32,
        d.FieldDescriptor.TYPE_UINT64,
        d.FieldDescriptor.TYPE_FIXED32,
        d.FieldDescriptor.TYPE_FIXED64,
    ):
        return st.integers(0, 2**31)
    return st.integers(-(2**31), 2**31 - 1)


def messages(desc: d.Descriptor, depth: int = 0) -> st.SearchStrategy[message.Message]:
    cls = message_factory.GetMessageClass(desc)
    if desc.full_name == "google.protobuf.Struct":

        def struct(v: dict[str, Any]) -> message.Message:
            m = cls()
            m.update(v)  # type: ignore[attr-defined]
            return m

        return st.dictionaries(TEXT, json_values(), max_size=3).map(struct)
    if desc.full_name == "google.protobuf.Value":
        return st.just(cls())
    if depth > 3:
        return st.just(cls())

    @st.composite
    def build(draw: st.DrawFn) -> message.Message:
        m = cls()
        for f in desc.fields:
            if not draw(st.booleans()):
                continue
            try:
                if f.is_repeated:
                    values = draw(st.lists(field_value(f, depth), max_size=2))
                    target = getattr(m, f.name)
                    for v in values:
                        if f.type == d.FieldDescriptor.TYPE_MESSAGE:
                            target.add().CopyFrom(v)
                        else:
                            target.append(v)
                elif f.type == d.FieldDescriptor.TYPE_MESSAGE:
                    getattr(m, f.name).CopyFrom(draw(field_value(f, depth)))
                else:
                    setattr(m, f.name, draw(field_value(f, depth)))
            except (ValueError, TypeError):
                continue  # e.g. an out-of-range enum on a closed enum
        return m

    return build()


async def call(running: Running, service: d.ServiceDescriptor, method: d.MethodDescriptor, request: Any) -> None:
    path = f"/{service.full_name}/{method.name}"
    encode = type(request).SerializeToString
    decode = message_factory.GetMessageClass(method.output_type).FromString
    ch = running.channel
    try:
        if method.client_streaming:
            stream = ch.stream_stream(path, request_serializer=encode, response_deserializer=decode)

            async def frames():  # type: ignore[no-untyped-def]
                yield request

            c = stream(frames(), timeout=5)
            async for _ in c:
                pass
        elif method.server_streaming:
            c = ch.unary_stream(path, request_serializer=encode, response_deserializer=decode)(request, timeout=5)
            async for _ in c:
                pass
        else:
            await ch.unary_unary(path, request_serializer=encode, response_deserializer=decode)(request, timeout=5)
    except grpc.aio.AioRpcError as err:
        assert err.code() not in FORBIDDEN, f"{path} answered {err.code()}: {err.details()}\n{request}"


def requests_for_every_rpc() -> st.SearchStrategy[tuple[int, message.Message]]:
    return st.integers(0, len(METHODS) - 1).flatmap(lambda i: messages(METHODS[i][1].input_type).map(lambda m: (i, m)))


def test_generated_requests_never_get_unknown_or_internal() -> None:
    async def scenario() -> None:
        running = await start_server()
        try:

            @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
            @given(requests_for_every_rpc())
            def one(case: tuple[int, message.Message]) -> None:
                service, method = METHODS[case[0]]
                future = asyncio.run_coroutine_threadsafe(call(running, service, method, case[1]), loop)
                future.result(timeout=30)

            await asyncio.to_thread(one)
            for service, method in METHODS:  # and every RPC with an empty request, at least once
                await call(running, service, method, message_factory.GetMessageClass(method.input_type)())
            health = health_pb2_grpc.HealthStub(running.channel)
            reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        finally:
            await running.close()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()
