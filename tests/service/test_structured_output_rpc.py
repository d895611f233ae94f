"""Structured output over a real server, as Mastra's: the error strategies
(strict by default), a separate structuring model and its instructions
(carried through process_input_step), the object in the last assistant
message's metadata (and so in the thread), and tools still offered beside a
schema."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from agentd.runtime import Agent, Memory, ModelRequest, register_provider
from agentd.runtime.chunks import TextDelta, TextEnd, TextStart, Usage
from agentd.runtime.models.base import ModelEvent, ModelFinish
from agentd.runtime.processors.base import ProcessInputStepArgs, Processor, StepOverrides
from agentd.runtime.storage import InMemoryStorage
from agentd.runtime.tools import tool
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.server import serving
from support_models import FunctionModel

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def structured(*steps: dict[str, Any], **fields: Any) -> opb.ExecutionOptions:
    """Options asking for CITY, the local/scripted model following `steps`."""
    options = opb.ExecutionOptions(structured_output=opb.StructuredOutput(**fields))
    options.structured_output.schema.update(CITY)
    options.provider_options.update({"local": {"script": list(steps)}})
    return options


def generate(text: str, options: opb.ExecutionOptions, agent_id: str = "scripted") -> apb.GenerateRequest:
    return apb.GenerateRequest(agent_id=agent_id, text=text, options=options)


def metadata_of(message: Any) -> dict[str, Any]:
    return json_format.MessageToDict(message.metadata)


async def test_strict_by_default_fails_a_run_whose_answer_is_not_the_object() -> None:
    async with serving() as running:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await running.agents.Generate(generate("x", structured({"text": "Paris, I think"})))
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert rich_error(info.value).reason == "STRUCTURED_OUTPUT_INVALID"
        assert "the answer is not JSON" in info.value.details()
        # A JSON answer that misses the schema is no object either; on a stream, the run ends with an error chunk.
        wrong = structured({"object": {"city": 75}}, error_strategy=opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT)
        chunks = [
            c
            async for m in running.agents.Stream(apb.StreamRequest(agent_id="scripted", text="x", options=wrong))
            for c in m.chunks
        ]
        assert chunks[-1].WhichOneof("payload") == "error"
        assert chunks[-1].error.reason == "STRUCTURED_OUTPUT_INVALID"
        assert "/city fails 'type'" in chunks[-1].error.message and "75" not in chunks[-1].error.message


async def test_warn_ends_with_no_object_and_fallback_with_the_fallback_value() -> None:
    async with serving() as running:
        warned = await running.agents.Generate(
            generate("x", structured({"text": "Paris"}, error_strategy=opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN))
        )
        assert not warned.HasField("object") and warned.text == "Paris"
        assert any(w.startswith("structured output: the answer is not JSON") for w in warned.warnings)

        fallback = structured(
            {"text": "Paris"},
            error_strategy=opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK,
            fallback_value=struct_pb2.Value(
                struct_value=json_format.ParseDict({"city": "unknown"}, struct_pb2.Struct())
            ),
        )
        reply = await running.agents.Generate(generate("x", fallback))
        assert json_format.MessageToDict(reply.object) == {"city": "unknown"}
        assert any(w.endswith("the fallback value was used") for w in reply.warnings)
        assert metadata_of(reply.response_messages[-1])["structuredOutput"] == {"city": "unknown"}


async def test_the_object_is_kept_in_the_last_assistant_message_and_the_thread() -> None:
    storage = InMemoryStorage()
    async with serving([Agent(id="chat", memory=Memory(storage))], storage=storage) as running:
        options = opb.ExecutionOptions(
            structured_output=opb.StructuredOutput(), memory=opb.MemoryOptions(resource="u1", thread_id="t-so")
        )
        options.structured_output.schema.update(CITY)
        reply = await running.agents.Generate(generate(json.dumps({"city": "Paris"}), options, agent_id="chat"))
        assert json_format.MessageToDict(reply.object) == {"city": "Paris"}
        assert metadata_of(reply.response_messages[-1]) == {"structuredOutput": {"city": "Paris"}}
        stored = await running.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t-so", resource_id="u1"))
        assistant = [m for m in stored.messages if m.role == reply.response_messages[-1].role]
        assert metadata_of(assistant[-1])["structuredOutput"] == {"city": "Paris"}


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"error_strategy": opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK}, "options.structured_output.fallback_value"),
        ({"fallback_value": struct_pb2.Value(string_value="x")}, "options.structured_output.fallback_value"),
        ({"instructions": "Be brief."}, "options.structured_output.instructions"),
        ({"model": "nowhere/model"}, "options.structured_output.model"),
    ],
)
async def test_structured_output_mistakes_are_invalid_arguments(fields: dict[str, Any], field: str) -> None:
    async with serving() as running:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await running.agents.Generate(generate("x", structured({"text": "{}"}, **fields)))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert list(rich_error(info.value).violations) == [field]


class Recording:
    """A registered provider whose model records each request and answers with `answer`."""

    def __init__(self, provider: str, answer: str, usage: Usage | None = None) -> None:
        self.requests: list[ModelRequest] = []
        self.answer = answer
        self.usage = usage or Usage()
        register_provider(provider, lambda model_id: FunctionModel(self.reply, provider=provider, model_id=model_id))

    async def reply(self, request: ModelRequest, call: int) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        yield TextStart("t")
        yield TextDelta("t", self.answer)
        yield TextEnd("t")
        yield ModelFinish("stop", self.usage)


@tool("weather", "The weather in a city")
def weather(args: Any) -> str:
    return "sunny"


async def test_tools_are_offered_beside_a_schema() -> None:
    main = Recording("so-main", json.dumps({"city": "Paris"}))
    async with serving([Agent(id="weatherman", model="so-main/m", tools=[weather])]) as running:
        options = opb.ExecutionOptions(structured_output=opb.StructuredOutput())
        options.structured_output.schema.update(CITY)
        reply = await running.agents.Generate(generate("x", options, agent_id="weatherman"))
    assert json_format.MessageToDict(reply.object) == {"city": "Paris"}
    [request] = main.requests
    assert [t.name for t in request.tools] == ["weather"] and request.structured_output is not None


class Instructor(Processor):
    """Gives the structuring model its instructions in process_input_step."""

    id = "instructor"

    def process_input_step(self, args: ProcessInputStepArgs) -> StepOverrides | None:
        if args.structured_output is None:
            return None
        return StepOverrides(
            structured_output=replace(args.structured_output, instructions="Use the city's official name.")
        )


async def test_a_structuring_model_with_instructions_from_process_input_step() -> None:
    main = Recording("so-writer", "The city is Paris, population 2.1 million.", Usage(input_tokens=10, output_tokens=8))
    structurer = Recording("so-structurer", json.dumps({"city": "Paris"}), Usage(input_tokens=30, output_tokens=5))
    agent = Agent(id="writer", model="so-writer/m", tools=[weather], input_processors=[Instructor()])
    async with serving([agent]) as running:
        options = opb.ExecutionOptions(structured_output=opb.StructuredOutput(model="so-structurer/s"))
        options.structured_output.schema.update(CITY)
        reply = await running.agents.Generate(generate("x", options, agent_id="writer"))
    assert reply.text == "The city is Paris, population 2.1 million."
    assert json_format.MessageToDict(reply.object) == {"city": "Paris"}
    assert (reply.total_usage.input_tokens, reply.total_usage.output_tokens) == (40, 13)  # the structuring call counts
    [asked] = main.requests  # the agent's model answers in text, told the fields, with its tools
    assert asked.structured_output is None and [t.name for t in asked.tools] == ["weather"]
    assert any('"city"' in m.text and "extract structured data" in m.text for m in asked.prompt if m.role == "system")
    [structuring] = structurer.requests
    assert [m.role for m in structuring.prompt] == ["system", "user"]
    assert structuring.prompt[0].text == "Use the city's official name."
    assert "# Assistant Response\nThe city is Paris, population 2.1 million." in structuring.prompt[1].text
    assert structuring.structured_output is not None and structuring.structured_output.schema == CITY
