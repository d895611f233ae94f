"""Property-based: requests built from the descriptors, for every RPC of the
four services, never get UNKNOWN or INTERNAL, every INVALID_ARGUMENT names its
fields (BadRequest field violations), and the server stays SERVING.

`AGENTD_FUZZ_CASES` sets the number of cases (300 in the suite; `make fuzz`
runs 50,000)."""

from __future__ import annotations

import asyncio
import collections
import functools
import os
import random
from typing import Any

import grpc
from google.protobuf import descriptor as d
from google.protobuf import message, message_factory
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentd.grpc.server import SERVICES
from agentd.grpc.wire import locate_malformed
from agentd_proto.v1 import agent_service_pb2 as apb
from support.server import Running, start_server

CASES = int(os.environ.get("AGENTD_FUZZ_CASES", "300"))
#: Every answer, by RPC and status (printed by `make fuzz`).
ANSWERS: collections.Counter[tuple[str, str]] = collections.Counter()

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


@functools.cache  # one strategy per message type and depth: building them is the slow part
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
                if f.message_type is not None and f.message_type.GetOptions().map_entry:
                    key, value = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
                    entries = draw(st.dictionaries(field_value(key, depth), field_value(value, depth), max_size=2))
                    target = getattr(m, f.name)
                    for k, v in entries.items():
                        if value.type == d.FieldDescriptor.TYPE_MESSAGE:
                            target[k].CopyFrom(v)
                        else:
                            target[k] = v
                elif f.is_repeated:
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
        ANSWERS[(path, err.code().name)] += 1
        assert err.code() not in FORBIDDEN, f"{path} answered {err.code()}: {err.details()}\n{request}"
        if err.code() == grpc.StatusCode.INVALID_ARGUMENT:
            assert violations(err), f"{path}: INVALID_ARGUMENT without field violations: {err.details()}\n{request}"
    else:
        ANSWERS[(path, "OK")] += 1


def violations(err: grpc.aio.AioRpcError) -> list[str]:
    raw = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
    if raw is None:
        return []
    found = []
    for detail in status_pb2.Status.FromString(raw).details:  # type: ignore[arg-type]
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            found += [v.field for v in bad.field_violations]
    return found


def requests_for_every_rpc() -> st.SearchStrategy[tuple[int, message.Message]]:
    return st.integers(0, len(METHODS) - 1).flatmap(lambda i: messages(METHODS[i][1].input_type).map(lambda m: (i, m)))


def test_generated_requests_never_get_unknown_or_internal() -> None:
    async def scenario() -> None:
        running = await start_server()
        try:

            @settings(max_examples=CASES, deadline=None, suppress_health_check=list(HealthCheck))
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
            if "AGENTD_FUZZ_CASES" in os.environ:
                statuses = collections.Counter[str]()
                for (_, status), n in ANSWERS.items():
                    statuses[status] += n
                print(f"\nfuzz: {sum(ANSWERS.values())} calls, {dict(sorted(statuses.items()))}")
        finally:
            await running.close()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(scenario())
    finally:
        loop.close()


def sample(desc: d.Descriptor, rng: random.Random, depth: int = 0) -> message.Message:
    """A request with its string fields (and sub-messages') set: bytes worth garbling."""
    m = message_factory.GetMessageClass(desc)()
    for f in desc.fields:
        if f.is_repeated or rng.random() < 0.3:
            continue
        if f.type == d.FieldDescriptor.TYPE_STRING:
            setattr(m, f.name, rng.choice(["echo", "u1", "t-1", "hello there"]))
        elif (
            f.type == d.FieldDescriptor.TYPE_MESSAGE and depth < 2 and not f.message_type.full_name.startswith("google")
        ):
            getattr(m, f.name).CopyFrom(sample(f.message_type, rng, depth + 1))
    return m


def test_garbled_bytes_get_invalid_argument_naming_the_field_when_the_bytes_tell() -> None:
    """Valid requests with bytes flipped or cut: MALFORMED_REQUEST (or a
    normal answer, when the damage still decodes), never UNKNOWN or INTERNAL;
    an undecodable string field is named in a field violation."""
    rng = random.Random(2024)

    async def scenario() -> None:
        running = await start_server()
        try:
            unary = [(s, m) for s, m in METHODS if not m.client_streaming and not m.server_streaming]
            for i in range(max(100, CASES // 3)):
                service, method = unary[i % len(unary)]
                cls = message_factory.GetMessageClass(method.input_type)
                data = bytearray(sample(method.input_type, rng).SerializeToString())
                if data and rng.random() < 0.5:
                    data[rng.randrange(len(data))] = rng.randrange(256)
                else:
                    data = data[: rng.randrange(len(data) + 1)] + b"\xff"
                call_raw = running.channel.unary_unary(f"/{service.full_name}/{method.name}")
                try:
                    await call_raw(bytes(data), timeout=5)
                except grpc.aio.AioRpcError as err:
                    assert err.code() not in FORBIDDEN, f"{method.name}: {err.code()} {err.details()}"
                    located = locate_malformed(cls.DESCRIPTOR, bytes(data))
                    if "did not decode" in (err.details() or "") and located is not None:
                        assert violations(err) == [located[0]]
            named = running.channel.unary_unary("/agentd.v1.AgentService/Generate")
            bad = apb.GenerateRequest(agent_id="echo", text="hi").SerializeToString().replace(b"hi", b"\xff\xfe")
            try:
                await named(bad, timeout=5)
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and violations(err) == ["text"]
            else:
                raise AssertionError("invalid UTF-8 decoded")
        finally:
            await running.channel.close()
            await running.server.stop(grace=0)

    asyncio.run(scenario())
