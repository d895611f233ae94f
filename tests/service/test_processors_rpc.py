"""Processors over gRPC: per-call overrides by registered name, workflows,
retries, error-processor defaults, tripwire and data chunks on the wire."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from agentd.runtime import Agent, Message, TextPart
from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.processors.base import (
    ProcessInputArgs,
    ProcessInputStepArgs,
    Processor,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
    ProcessOutputStreamArgs,
)
from agentd.runtime.processors.factory import from_options
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import usage_pb2 as upb
from support.errors import rich_error
from support.server import Running, serving, start_server
from support.wire import lane, scripted


class LowerCase(Processor):
    id = "lower-case"

    def process_input(self, args: ProcessInputArgs) -> list[Message]:
        return [Message(role=m.role, id=m.id, parts=[TextPart(m.text.lower())]) for m in args.messages]


class SecretFilter(Processor):
    id = "secret-filter"

    def __init__(self, word: str = "secret") -> None:
        self.word = word

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        if isinstance(args.part.payload, TextDelta) and self.word in args.part.payload.text:
            return None
        return args.part


class Moderation(Processor):
    id = "moderation-notes"

    async def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message]:
        assert args.writer is not None
        await args.writer.custom(
            "data-moderation-update", {"moderatedText": args.result.text.upper(), "reason": "tone"}
        )
        return [
            Message(role=m.role, parts=m.parts, id=m.id, metadata={**m.metadata, "reviewed": True})
            for m in args.messages
        ]


class Quality(Processor):
    id = "quality-checker"

    def process_output_step(self, args: ProcessOutputStepArgs) -> list[Message]:
        if "good" not in args.text:
            args.abort("Be more detailed.", retry=True, metadata={"score": 0.1})
        return []


class Guard(Processor):
    id = "guard"

    def __init__(self, banned: str = "forbidden") -> None:
        self.banned = banned

    def process_input(self, args: ProcessInputArgs) -> None:
        if any(self.banned in m.text for m in args.messages):
            args.abort(f"input mentions {self.banned}", metadata={"word": self.banned})


class Tier(Processor):
    id = "tier"

    def process_input(self, args: ProcessInputArgs) -> list[Message]:
        tier = args.request_context.get("tier", "free")
        return [Message(role=m.role, id=m.id, parts=[TextPart(f"[{tier}] {m.text}")]) for m in args.messages]


class Redact(Processor):
    id = "redact"

    def process_input(self, args: ProcessInputArgs) -> list[Message]:
        return [
            Message(role=m.role, id=m.id, parts=[TextPart(m.text.replace("555-1234", "[PHONE]"))])
            for m in args.messages
        ]


PROCESSORS = {
    "lower-case": from_options(LowerCase),
    "secret-filter": from_options(SecretFilter),
    "moderation-notes": from_options(Moderation),
    "quality-checker": from_options(Quality),
    "guard": from_options(Guard),
    "tier": from_options(Tier),
    "redact": from_options(Redact),
}


def first_step_upper(args: ProcessInputStepArgs) -> dict[str, Any] | None:
    return None


@pytest.fixture
async def proc_server() -> AsyncIterator[Running]:
    agents = [
        Agent(id="echo"),
        Agent(id="scripted", model="local/scripted"),
        Agent(id="guarded", input_processors=[Guard()]),
    ]
    async with serving(agents, processors=PROCESSORS, step_functions={"noop": first_step_upper}) as running:
        yield running


async def stream(running: Running, **request: Any) -> list[Any]:
    return [c async for m in running.agents.Stream(apb.StreamRequest(**request)) for c in m.chunks]


async def test_per_call_processors_by_registered_name(proc_server: Running) -> None:
    reply = await proc_server.agents.Generate(
        apb.GenerateRequest(
            agent_id="echo", text="Hello THERE", options=opb.ExecutionOptions(input_processors=lane("lower-case"))
        )
    )
    assert reply.text == "hello there"


async def test_built_in_processor_with_options_over_rpc(proc_server: Running) -> None:
    options = opb.ExecutionOptions(input_processors=lane(("unicode-normalizer", {"trim": True})))
    reply = await proc_server.agents.Generate(
        apb.GenerateRequest(agent_id="echo", text="  \uff46\uff55\uff4c\uff4c  width  ", options=options)
    )
    assert reply.text == "full width"


async def test_stream_filter_over_the_wire(proc_server: Running) -> None:
    chunks = await stream(
        proc_server,
        agent_id="echo",
        text="a secret b",
        options=opb.ExecutionOptions(output_processors=lane("secret-filter")),
    )
    assert "".join(c.text_delta.text for c in chunks if c.HasField("text_delta")) == "a b"
    assert [c.seq for c in chunks] == list(range(1, len(chunks) + 1))
    reply = await proc_server.agents.Generate(
        apb.GenerateRequest(
            agent_id="echo", text="a secret b", options=opb.ExecutionOptions(output_processors=lane("secret-filter"))
        )
    )
    assert reply.text == "a b"


async def test_data_chunk_and_result_metadata_reach_the_client(proc_server: Running) -> None:
    chunks = await stream(
        proc_server,
        agent_id="echo",
        text="calm words",
        options=opb.ExecutionOptions(output_processors=lane("moderation-notes")),
    )
    data = [c.data for c in chunks if c.HasField("data")]
    assert [d.type for d in data] == ["data-moderation-update"]
    assert data[0].data.struct_value["moderatedText"] == "CALM WORDS"
    finish = chunks[-1].finish
    assert finish.response_messages[0].metadata["reviewed"] is True
    reply = await proc_server.agents.Generate(
        apb.GenerateRequest(
            agent_id="echo", text="x", options=opb.ExecutionOptions(output_processors=lane("moderation-notes"))
        )
    )
    assert reply.response_messages[0].metadata["reviewed"] is True
    assert any(p.HasField("data") for p in reply.response_messages[0].parts)


async def test_tripwire_on_stream_and_generate(proc_server: Running) -> None:
    chunks = await stream(proc_server, agent_id="guarded", text="a forbidden topic")
    kinds = [c.WhichOneof("payload") for c in chunks]
    assert kinds == ["start", "tripwire", "finish"]
    tripwire = chunks[1].tripwire.tripwire
    assert (tripwire.processor_id, tripwire.reason) == ("guard", "input mentions forbidden")
    assert tripwire.metadata["word"] == "forbidden"
    assert chunks[2].finish.finish_reason == upb.FINISH_REASON_OTHER
    reply = await proc_server.agents.Generate(apb.GenerateRequest(agent_id="guarded", text="forbidden"))
    assert reply.finish_reason == upb.FINISH_REASON_OTHER
    assert reply.tripwire.processor_id == "guard" and reply.text == ""


async def test_max_processor_retries_per_call(proc_server: Running) -> None:
    steps = ({"text": "meh"}, {"text": "good now"})
    retried = await proc_server.agents.Generate(
        apb.GenerateRequest(
            agent_id="scripted",
            text="q",
            options=scripted(*steps, output_processors=lane("quality-checker"), max_processor_retries=2),
        )
    )
    assert retried.text == "good now" and not retried.HasField("tripwire")
    assert retried.steps[0].tripwire.retry and retried.steps[0].text == ""
    not_retried = await proc_server.agents.Generate(
        apb.GenerateRequest(
            agent_id="scripted", text="q", options=scripted(*steps, output_processors=lane("quality-checker"))
        )
    )
    assert not_retried.finish_reason == upb.FINISH_REASON_OTHER
    assert not_retried.tripwire.reason == "Be more detailed." and not_retried.tripwire.retry


async def test_error_processor_defaults_over_rpc(proc_server: Running) -> None:
    steps = ({"error": {"message": "upstream 500", "status": 500, "retryable": True}}, {"text": "recovered"})
    reply = await proc_server.agents.Generate(
        apb.GenerateRequest(agent_id="scripted", text="x", options=scripted(*steps))
    )
    assert reply.text == "recovered"
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await proc_server.agents.Generate(
            apb.GenerateRequest(agent_id="scripted", text="x", options=scripted(*steps, error_processor_defaults=False))
        )
    assert rich_error(info.value).reason == "MODEL_ERROR"
    with pytest.raises(grpc.aio.AioRpcError):  # an empty per-call list replaces the defaults too
        await proc_server.agents.Generate(
            apb.GenerateRequest(
                agent_id="scripted", text="x", options=scripted(*steps, error_processors=opb.ProcessorList())
            )
        )


async def test_request_context_reaches_processors(proc_server: Running) -> None:
    context = struct_pb2.Struct()
    context.update({"tier": "pro"})
    reply = await proc_server.agents.Generate(
        apb.GenerateRequest(
            agent_id="echo",
            text="hi",
            options=opb.ExecutionOptions(input_processors=lane("tier"), request_context=context),
        )
    )
    assert reply.text == "[pro] hi"


async def test_workflow_with_parallel_branches_over_rpc(proc_server: Running) -> None:
    workflow = opb.ProcessorWorkflow(
        id="pipeline",
        steps=[
            opb.WorkflowStep(
                parallel=opb.ParallelStep(branches=[opb.ProcessorSpec(name="redact"), opb.ProcessorSpec(name="guard")])
            ),
            opb.WorkflowStep(map=opb.MapStep(select="processor:redact")),
            opb.WorkflowStep(processor=opb.ProcessorSpec(name="lower-case")),
        ],
    )
    options = opb.ExecutionOptions(input_processors=opb.ProcessorList(processors=[opb.ProcessorRef(workflow=workflow)]))
    reply = await proc_server.agents.Generate(
        apb.GenerateRequest(agent_id="echo", text="CALL 555-1234", options=options)
    )
    assert reply.text == "call [phone]"
    tripped = await proc_server.agents.Generate(apb.GenerateRequest(agent_id="echo", text="forbidden", options=options))
    assert tripped.tripwire.processor_id == "guard"


async def test_structured_output_object_on_generate(proc_server: Running) -> None:
    options = scripted({"object": {"city": "Paris", "population": 2100000}})
    options.structured_output.schema.update({"type": "object", "properties": {"city": {"type": "string"}}})
    reply = await proc_server.agents.Generate(apb.GenerateRequest(agent_id="scripted", text="x", options=options))
    assert reply.object.struct_value["city"] == "Paris"


async def test_prepare_step_by_registered_name(proc_server: Running) -> None:
    reply = await proc_server.agents.Generate(
        apb.GenerateRequest(agent_id="echo", text="x", options=opb.ExecutionOptions(prepare_step="noop"))
    )
    assert reply.text == "x"
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await proc_server.agents.Generate(
            apb.GenerateRequest(agent_id="echo", text="x", options=opb.ExecutionOptions(prepare_step="nope"))
        )
    err = rich_error(info.value)
    assert (err.reason, list(err.violations)) == ("UNKNOWN_STEP_FUNCTION", ["options.prepare_step"])


@pytest.mark.parametrize(
    ("options", "field"),
    [
        (
            opb.ExecutionOptions(input_processors=lane(("token-limiter", {"limitt": 3}))),
            "options.input_processors.processors[0].processor.options",
        ),
        (
            opb.ExecutionOptions(
                error_processors=opb.ProcessorList(
                    processors=[
                        opb.ProcessorRef(
                            workflow=opb.ProcessorWorkflow(
                                id="w", steps=[opb.WorkflowStep(processor=opb.ProcessorSpec(name="redact"))]
                            )
                        )
                    ]
                )
            ),
            "options.error_processors.processors[0].workflow",
        ),
        (
            opb.ExecutionOptions(
                input_processors=opb.ProcessorList(
                    processors=[
                        opb.ProcessorRef(
                            workflow=opb.ProcessorWorkflow(
                                id="w",
                                steps=[
                                    opb.WorkflowStep(
                                        parallel=opb.ParallelStep(branches=[opb.ProcessorSpec(name="redact")])
                                    )
                                ],
                            )
                        )
                    ]
                )
            ),
            "options.input_processors.processors[0].workflow",
        ),
    ],
)
async def test_bad_processor_entries_are_field_violations(
    proc_server: Running, options: opb.ExecutionOptions, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await proc_server.agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options))
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert field in err.violations, err.violations


async def test_get_agent_lists_processor_ids_per_lane(proc_server: Running) -> None:
    agent = (await proc_server.agents.GetAgent(apb.GetAgentRequest(agent_id="guarded"))).agent
    assert list(agent.input_processor_ids) == ["guard"]
    assert list(agent.error_processor_ids) == [
        "provider-history-compat",
        "prefill-error-handler",
        "unsupported-file-handler",
        "stream-error-retry-processor",
    ]


async def test_request_context_schema_over_rpc() -> None:
    schema = {"type": "object", "properties": {"tier": {"enum": ["free", "pro"]}}}
    running = await start_server([Agent(id="strict", request_context_schema=schema)])
    try:
        context = struct_pb2.Struct()
        context.update({"tier": "gold"})
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await running.agents.Generate(
                apb.GenerateRequest(agent_id="strict", text="x", options=opb.ExecutionOptions(request_context=context))
            )
        err = rich_error(info.value)
        assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_CONTEXT_INVALID")
        assert list(err.violations) == ["options.request_context.tier"]
    finally:
        await running.close()


async def test_sub_agent_chunks_travel_nested_and_never_share_a_message() -> None:
    from agentd.runtime import ExecutionOptions

    helper = Agent(id="helper", description="Answers sub-questions")
    lead = Agent(
        id="lead",
        model="local/scripted",
        agents={"ask_helper": helper},
        default_options=ExecutionOptions(
            provider_options={
                "local": {
                    "script": [
                        {"toolCalls": [{"id": "c1", "name": "ask_helper", "args": {"prompt": "inner answer"}}]},
                        {"text": "outer answer"},
                    ]
                }
            }
        ),
    )
    running = await start_server([lead, helper])
    try:
        messages = [m async for m in running.agents.Stream(apb.StreamRequest(agent_id="lead", text="x"))]
        assert all(len({c.run_id for c in m.chunks}) == 1 for m in messages)
        chunks = [c for m in messages for c in m.chunks]
        outer = chunks[0].run_id
        nested = [c for c in chunks if c.run_id != outer]
        assert nested and all(c.parent_run_id == outer for c in nested)
        assert "".join(c.text_delta.text for c in nested if c.HasField("text_delta")) == "inner answer"
        assert [c.seq for c in chunks if c.run_id == outer] == list(
            range(1, 1 + sum(c.run_id == outer for c in chunks))
        )
        described = (await running.agents.GetAgent(apb.GetAgentRequest(agent_id="lead"))).agent
        assert list(described.sub_agent_ids) == ["helper"]
    finally:
        await running.close()
