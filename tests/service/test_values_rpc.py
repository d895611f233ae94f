"""NaN and ±Infinity in any google.protobuf.Value (request context, provider
options, cache values, signal attributes, state values, tool results) answer
INVALID_ARGUMENT with a field violation naming where the number is, on every
RPC, never INTERNAL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2
from google.rpc import error_details_pb2

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import cache_service_pb2 as cpb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.server import Running

NOT_FINITE = [float("nan"), float("inf"), float("-inf")]
T = spb.SignalTarget(resource_id="u1", thread_id="t1")


def number(x: float) -> struct_pb2.Value:
    return struct_pb2.Value(number_value=x)


def context_with(x: float) -> opb.ExecutionOptions:
    options = opb.ExecutionOptions()
    options.request_context.update({"page": {"scores": [1, x]}})
    return options


async def invalid(call: Callable[[], Any]) -> dict[str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call()
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT, err.message
    return err.violations


@pytest.mark.parametrize("x", NOT_FINITE)
async def test_stream_request_context(running: Running, x: float) -> None:
    async def call() -> None:
        async for _ in running.agents.Stream(apb.StreamRequest(agent_id="chat", text="hi", options=context_with(x))):
            pass

    violations = await invalid(call)
    assert list(violations) == ["options.request_context.page.scores[1]"]
    assert "finite" in violations["options.request_context.page.scores[1]"]


@pytest.mark.parametrize("x", NOT_FINITE)
async def test_generate_provider_options(running: Running, x: float) -> None:
    options = opb.ExecutionOptions()
    options.provider_options.update({"local": {"delayMs": x}})
    request = apb.GenerateRequest(agent_id="chat", text="hi", options=options)
    assert list(await invalid(lambda: running.agents.Generate(request))) == ["options.provider_options.local.delayMs"]


@pytest.mark.parametrize("x", NOT_FINITE)
async def test_queue_message_attributes(running: Running, x: float) -> None:
    request = sspb.QueueMessageRequest(
        agent_id="chat",
        target=T,
        message=spb.MessageInput(text="hi", attributes=[mpb.Attribute(name="n", value=number(x))]),
    )
    assert list(await invalid(lambda: running.signals.QueueMessage(request))) == ["message.attributes[0].value"]


@pytest.mark.parametrize("x", NOT_FINITE)
async def test_send_signal_attributes(running: Running, x: float) -> None:
    request = sspb.SendSignalRequest(
        agent_id="chat",
        target=T,
        signal=spb.SignalInput(type="user", text="hi", attributes=[mpb.Attribute(name="n", value=number(x))]),
    )
    assert list(await invalid(lambda: running.signals.SendSignal(request))) == ["signal.attributes[0].value"]


@pytest.mark.parametrize("x", NOT_FINITE)
async def test_send_state_signal_value(running: Running, x: float) -> None:
    request = sspb.SendStateSignalRequest(
        agent_id="chat", target=T, state=spb.StateSignalInput(id="browser", cache_key="k", text="s", value=number(x))
    )
    assert list(await invalid(lambda: running.signals.SendStateSignal(request))) == ["state.value"]


@pytest.mark.parametrize("x", NOT_FINITE)
async def test_set_cache_entry_value(running: Running, x: float) -> None:
    value = struct_pb2.Value(list_value=struct_pb2.ListValue(values=[number(1), number(x)]))
    request = cpb.SetCacheEntryRequest(key="k", value=value)
    assert list(await invalid(lambda: running.cache.SetCacheEntry(request))) == ["value[1]"]


@pytest.mark.parametrize("x", NOT_FINITE)
async def test_connect_frame(running: Running, x: float) -> None:
    frames = [
        tpb.ConnectRequest(request_id="o", open=tpb.ConnectOpen(agent_id="chat", resource_id="u1", thread_id="t1")),
        tpb.ConnectRequest(
            request_id="bad",
            tool_result=tpb.ConnectToolResult(run_id="r", tool_call_id="c", result=number(x)),
        ),
    ]

    async def requests() -> AsyncIterator[tpb.ConnectRequest]:
        for frame in frames:
            yield frame

    answers = [a async for a in running.threads.Connect(requests()) if a.request_id == "bad"]
    assert len(answers) == 1 and answers[0].HasField("error")
    assert answers[0].error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    fields = []
    for detail in answers[0].error.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [v.field for v in bad.field_violations]
    assert fields == ["tool_result.result"]
