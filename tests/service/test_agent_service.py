"""AgentService over a real grpc.aio server on loopback."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from agentd.runtime import Agent, ExecutionOptions
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import usage_pb2 as upb
from support.errors import rich_error
from support.server import Running, start_server


async def collect(call: grpc.aio.UnaryStreamCall) -> tuple[list[apb.StreamResponse], list]:  # type: ignore[type-arg]
    messages = [m async for m in call]
    return messages, [c for m in messages for c in m.chunks]


async def test_generate_returns_text_usage_and_finish_reason(server: Running) -> None:
    reply = await server.agents.Generate(apb.GenerateRequest(agent_id="echo", text="the quick brown fox"))
    assert reply.text == "the quick brown fox"
    assert reply.finish_reason == upb.FINISH_REASON_STOP
    assert reply.usage.input_tokens > 0
    assert reply.usage.output_tokens == 4
    assert reply.usage.total_tokens == reply.usage.input_tokens + reply.usage.output_tokens
    assert reply.run_id
    assert [m.role for m in reply.response_messages] == [mpb.ROLE_ASSISTANT]
    assert reply.response_messages[0].parts[0].text.text == "the quick brown fox"
    assert reply.model == "local/echo"


async def test_generate_accepts_messages(server: Running) -> None:
    request = apb.GenerateRequest(
        agent_id="echo",
        messages=[
            mpb.Message(role=mpb.ROLE_USER, parts=[mpb.Part(text=mpb.TextPart(text="first"))]),
            mpb.Message(role=mpb.ROLE_ASSISTANT, parts=[mpb.Part(text=mpb.TextPart(text="ok"))]),
            mpb.Message(role=mpb.ROLE_USER, parts=[mpb.Part(text=mpb.TextPart(text="second one"))]),
        ],
    )
    reply = await server.agents.Generate(request)
    assert reply.text == "second one"  # echo answers the last user message


async def test_stream_chunk_order_and_contiguous_seq(server: Running) -> None:
    _, chunks = await collect(server.agents.Stream(apb.StreamRequest(agent_id="echo", text="one two three")))
    kinds = [c.WhichOneof("payload") for c in chunks]
    assert kinds == [
        "start",
        "step_start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_end",
        "step_finish",
        "finish",
    ]
    assert [c.seq for c in chunks] == list(range(1, len(chunks) + 1))
    assert len({c.run_id for c in chunks}) == 1 and chunks[0].run_id
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "one two three"
    finish = chunks[-1].finish
    assert finish.finish_reason == upb.FINISH_REASON_STOP
    assert finish.total_usage.output_tokens == 3
    assert finish.response_messages[0].parts[0].text.text == "one two three"
    assert all(c.offset == 0 for c in chunks)  # not read through a subscription


async def test_slow_reader_gets_2000_chunks_in_fewer_messages() -> None:
    words = " ".join(f"w{i}" for i in range(1994))  # + 6 framing chunks = 2000
    running = await start_server()
    # A slow reader with a fixed receive window: without BDP probing the window
    # does not grow to swallow the whole run, so the server must batch.
    channel = grpc.aio.insecure_channel(running.addr, options=[("grpc.http2.bdp_probe", 0)])
    try:
        stub = agent_service_pb2_grpc.AgentServiceStub(channel)
        call = stub.Stream(apb.StreamRequest(agent_id="echo", text=words))
        first = await call.read()
        run_id = first.chunks[0].run_id
        # The server's test hook: returns once the run has ended, while we read nothing.
        await asyncio.wait_for(running.host.runs.wait_finished(run_id), 30)
        messages = [first]
        while (message := await call.read()) is not grpc.aio.EOF:
            messages.append(message)
        chunks = [c for m in messages for c in m.chunks]
        assert [c.seq for c in chunks] == list(range(1, 2001))
        assert len(messages) < 2000
        assert max(len(m.chunks) for m in messages) > 1
        assert all(len({c.run_id for c in m.chunks}) == 1 for m in messages)
        assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == words
    finally:
        await channel.close()
        await running.close()


async def test_trickle_travels_one_chunk_per_message(server: Running) -> None:
    options = opb.ExecutionOptions()
    options.provider_options.update({"local": {"delayMs": 20}})
    messages, chunks = await collect(
        server.agents.Stream(apb.StreamRequest(agent_id="echo", text="a b c d", options=options))
    )
    # A trickle is not held back to build batches: each delta travels as it is made.
    assert all(
        sum(c.HasField("text_delta") for c in m.chunks) == 1
        for m in messages
        if any(c.HasField("text_delta") for c in m.chunks)
    )
    assert len(chunks) == 10


async def test_unknown_agent_is_not_found_with_reason(server: Running) -> None:
    for call in (
        server.agents.GetAgent(apb.GetAgentRequest(agent_id="nope")),
        server.agents.Generate(apb.GenerateRequest(agent_id="nope", text="hi")),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call
        err = rich_error(info.value)
        assert err.code == grpc.StatusCode.NOT_FOUND
        assert (err.reason, err.domain) == ("AGENT_NOT_FOUND", "agentd")
        assert err.metadata == {"agent_id": "nope"}
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await collect(server.agents.Stream(apb.StreamRequest(agent_id="nope", text="hi")))
    assert rich_error(info.value).reason == "AGENT_NOT_FOUND"


async def test_empty_request_names_the_missing_fields(server: Running) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.Generate(apb.GenerateRequest())
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.reason == "INVALID_REQUEST"
    assert set(err.violations) == {"agent_id", "text"}


@pytest.mark.parametrize(
    ("options", "field", "reason"),
    [
        (opb.ExecutionOptions(max_steps=0), "options.max_steps", "INVALID_REQUEST"),
        (opb.ExecutionOptions(max_processor_retries=-1), "options.max_processor_retries", "INVALID_REQUEST"),
        (
            opb.ExecutionOptions(model_settings=opb.ModelSettings(temperature=7)),
            "options.model_settings.temperature",
            "INVALID_REQUEST",
        ),
        (
            opb.ExecutionOptions(client_tools=[opb.ClientTool(name="pick")]),
            "options.client_tools",
            "CLIENT_TOOLS_REQUIRE_THREAD",
        ),
        (
            opb.ExecutionOptions(
                request_context=struct_pb2.Struct(fields={"agentd.resourceId": struct_pb2.Value(string_value="x")})
            ),
            "options.request_context.agentd.resourceId",
            "RESERVED_CONTEXT_KEY",
        ),
        (
            opb.ExecutionOptions(memory=opb.MemoryOptions(thread_id="t1")),
            "options.memory.resource",
            "MEMORY_IDS_REQUIRED",
        ),
        (
            opb.ExecutionOptions(
                input_processors=opb.ProcessorList(
                    processors=[opb.ProcessorRef(processor=opb.ProcessorSpec(name="no-such-processor"))]
                )
            ),
            "options.input_processors.processors[0].processor.name",
            "UNKNOWN_PROCESSOR",
        ),
    ],
)
async def test_invalid_values_give_field_violations(
    server: Running, options: opb.ExecutionOptions, field: str, reason: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.Generate(apb.GenerateRequest(agent_id="echo", text="hi", options=options))
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert field in err.violations, err.violations
    assert err.reason == reason


async def test_invalid_message_parts_give_field_violations(server: Running) -> None:
    bad = apb.GenerateRequest(
        agent_id="echo",
        messages=[
            mpb.Message(role=mpb.ROLE_USER, parts=[mpb.Part(file=mpb.FilePart(url="ftp://x/y.png"))]),
            mpb.Message(parts=[mpb.Part(text=mpb.TextPart(text="no role"))]),
        ],
    )
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.Generate(bad)
    err = rich_error(info.value)
    assert {
        "messages[0].parts[0].file.media_type",
        "messages[0].parts[0].file.url",
        "messages[1].role",
    } <= set(err.violations)


async def test_keep_running_needs_a_thread(server: Running) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await collect(server.agents.Stream(apb.StreamRequest(agent_id="echo", text="x", keep_running=True)))
    err = rich_error(info.value)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "KEEP_RUNNING_REQUIRES_THREAD")


async def test_scripted_provider_error_reaches_stream_and_generate(server: Running) -> None:
    options = opb.ExecutionOptions()
    options.provider_options.update(
        {"local": {"script": [{"error": {"message": "overloaded", "status": 529, "retryable": True}}]}}
    )
    _, chunks = await collect(server.agents.Stream(apb.StreamRequest(agent_id="scripted", text="x", options=options)))
    assert chunks[-1].WhichOneof("payload") == "error"
    assert (chunks[-1].error.status_code, chunks[-1].error.retryable) == (529, True)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.Generate(apb.GenerateRequest(agent_id="scripted", text="x", options=options))
    err = rich_error(info.value)
    assert (err.code, err.reason, err.metadata["status_code"]) == (
        grpc.StatusCode.UNAVAILABLE,
        "MODEL_ERROR",
        "529",
    )


@pytest.mark.parametrize(
    ("step", "streamed"),
    [
        (
            {"text": "one two three", "error": {"message": "refused", "status": 400, "afterDeltas": 2}},
            ["text_start", "text_delta", "text_delta"],
        ),
        ({"text": "one two", "finishReason": "no-such-reason"}, ["text_start", "text_delta", "text_delta", "text_end"]),
    ],
    ids=["error-after-two-deltas", "bad-finish-reason"],
)
async def test_what_the_model_streamed_before_it_failed_reaches_the_caller_first(
    server: Running, step: dict[str, object], streamed: list[str]
) -> None:
    # The local model hands its events over in batches: a failure still comes after what was ready before it.
    options = opb.ExecutionOptions()
    options.provider_options.update({"local": {"script": [step]}})
    _, chunks = await collect(server.agents.Stream(apb.StreamRequest(agent_id="scripted", text="x", options=options)))
    kinds = [c.WhichOneof("payload") for c in chunks]
    assert kinds == ["start", "step_start", *streamed, "error"], kinds
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")).split() == ["one", "two"]


async def test_scripted_model_without_script_is_invalid_argument(server: Running) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.Generate(apb.GenerateRequest(agent_id="scripted", text="x"))
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "options.provider_options.local.script" in err.violations


async def test_cancelling_a_stream_aborts_its_run(server: Running) -> None:
    options = opb.ExecutionOptions()
    options.provider_options.update({"local": {"delayMs": 50}})
    call = server.agents.Stream(apb.StreamRequest(agent_id="echo", text=" ".join(["w"] * 200), options=options))
    first = await call.read()
    run_id = first.chunks[0].run_id
    handle = server.host.runs.get(run_id)
    assert handle is not None
    call.cancel()
    await asyncio.wait_for(server.host.runs.wait_finished(run_id), 10)
    result = await handle.result()
    assert result.aborted is not None and result.aborted.reason == "CALLER_CANCELLED"


async def test_list_and_get_agents(server: Running) -> None:
    seen, token = [], ""
    while True:  # AIP-158: page by page until the token comes back empty
        page = await server.agents.ListAgents(apb.ListAgentsRequest(page_size=1, page_token=token))
        assert len(page.agents) == 1
        seen.append(page.agents[0].id)
        token = page.next_page_token
        if not token:
            break
    assert seen == ["cached-echo", "chat", "echo", "scripted"]
    wanted = struct_pb2.Struct()
    wanted.update({"kind": "example", "model_family": "local"})  # only echo has both
    filtered = await server.agents.ListAgents(apb.ListAgentsRequest(metadata_filter=wanted))
    assert [a.id for a in filtered.agents] == ["echo"]
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.ListAgents(apb.ListAgentsRequest(page_token="garbage!"))
    assert rich_error(info.value).violations.keys() == {"page_token"}
    agent = (await server.agents.GetAgent(apb.GetAgentRequest(agent_id="echo"))).agent
    assert (agent.name, agent.model) == ("Echo", "local/echo")
    assert agent.metadata["kind"] == "example"
    cached = (await server.agents.GetAgent(apb.GetAgentRequest(agent_id="cached-echo"))).agent
    assert list(cached.input_processor_ids) == ["response-cache"]
    assert not agent.memory_enabled
    assert (await server.agents.GetAgent(apb.GetAgentRequest(agent_id="chat"))).agent.memory_enabled


async def test_health_serving_overall_and_per_service(server: Running) -> None:
    stub = health_pb2_grpc.HealthStub(server.channel)
    for name in (
        "",
        "agentd.v1.AgentService",
        "agentd.v1.ThreadService",
        "agentd.v1.SignalService",
        "agentd.v1.CacheService",
    ):
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=name))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_health_list_names_every_service_with_its_status(server: Running) -> None:
    reply = await health_pb2_grpc.HealthStub(server.channel).List(health_pb2.HealthListRequest())
    statuses = {name: status.status for name, status in reply.statuses.items()}
    services = ("", "agentd.v1.AgentService", "agentd.v1.ThreadService", "agentd.v1.SignalService")
    assert all(statuses[name] == health_pb2.HealthCheckResponse.SERVING for name in services), statuses
    assert "agentd.v1.CacheService" in statuses


async def test_reflection_lists_the_four_services(server: Running) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(server.channel)

    async def requests():  # type: ignore[no-untyped-def]
        yield reflection_pb2.ServerReflectionRequest(list_services="")

    async for reply in stub.ServerReflectionInfo(requests()):
        names = {s.name for s in reply.list_services_response.service}
        break
    assert {
        "agentd.v1.AgentService",
        "agentd.v1.ThreadService",
        "agentd.v1.SignalService",
        "agentd.v1.CacheService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= names


async def test_a_method_without_an_implementation_answers_unimplemented() -> None:
    from agentd.grpc import service
    from agentd.grpc.server import SERVICES
    from agentd_proto.v1 import signal_service_pb2 as sspb
    from agentd_proto.v1 import signal_service_pb2_grpc

    class Unimplemented(signal_service_pb2_grpc.SignalServiceServicer):
        """Implements none of the service's methods."""

    server = grpc.aio.server()
    service.register(
        server,
        next(s for s in SERVICES if s.name == "SignalService"),
        signal_service_pb2_grpc.SignalServiceServicer,
        Unimplemented(),
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await signal_service_pb2_grpc.SignalServiceStub(channel).ListNotifications(
                    sspb.ListNotificationsRequest(thread_id="t")
                )
        err = rich_error(info.value)
        assert (err.code, err.reason) == (grpc.StatusCode.UNIMPLEMENTED, "NOT_IMPLEMENTED")
        assert "SignalService.ListNotifications" in err.message
    finally:
        await server.stop(0)


async def test_undecodable_request_is_invalid_argument(server: Running) -> None:
    raw = server.channel.unary_unary("/agentd.v1.AgentService/Generate")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await raw(b"\xff\xff\xff\xff")
    err = rich_error(info.value)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_REQUEST")


async def test_python_app_agents_with_tools_over_rpc() -> None:
    from agentd.runtime import tool

    @tool("add", "Adds two numbers", {"type": "object", "properties": {"a": {}, "b": {}}})
    def add(args: dict) -> int:  # type: ignore[type-arg]
        return int(args["a"]) + int(args["b"])

    agent = Agent(
        id="calc",
        model="local/scripted",
        tools=[add],
        default_options=ExecutionOptions(
            provider_options={
                "local": {
                    "script": [
                        {"toolCalls": [{"id": "c1", "name": "add", "args": {"a": 2, "b": 3}}]},
                        {"text": "The sum is 5."},
                    ]
                }
            }
        ),
    )
    running = await start_server([agent])
    try:
        reply = await running.agents.Generate(apb.GenerateRequest(agent_id="calc", text="2+3?"))
        assert reply.text == "The sum is 5."
        assert [s.finish_reason for s in reply.steps] == [
            upb.FINISH_REASON_TOOL_CALLS,
            upb.FINISH_REASON_STOP,
        ]
        assert reply.tool_results[0].result.number_value == 5
        assert (
            reply.total_usage.output_tokens == reply.steps[0].usage.output_tokens + reply.steps[1].usage.output_tokens
        )
        described = (await running.agents.GetAgent(apb.GetAgentRequest(agent_id="calc"))).agent
        assert [t.name for t in described.tools] == ["add"]
    finally:
        await running.close()
